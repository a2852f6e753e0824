//! The reporter's sentence read as a sentence, beyond the fixed phrases of `prose`: a stage verb
//! in a clause that places the failure in it (`when I train`, `while I was generating`,
//! `I clicked to generate another image`, `trying to load deepseek`, `I train models … but`),
//! and how far a training had got (`after 2-3 steps`, `after training for ~120+ steps`,
//! `reached 22000 iterations`, `at epoch 3`, `after the first iteration`).
//!
//! Guards keep a sentence that does not report this failure's stage out: advice and
//! hypotheticals (`you should train with…`, `if you load the model in 8 bits`), a question
//! without the failure in it, a negation (`I don't train`), and a stage that went well
//! (`when I train it works fine`). Past forms (`trained`, `generated`, `loaded`) name a stage
//! that ended and are not read.

use crate::model::explain::Phase;

mod guard;
mod inputs;
mod later_run;
mod objects;
use guard::*;
pub(super) use guard::{behaviour_told, general_case, sentence_guarded};
use inputs::*;
use later_run::later_run;
pub(super) use objects::converted_non_weights;
use objects::{converts_a_document, launches_an_app, loads_weights, memory_object};

/// One word of a lowercase sentence: where it starts and ends (bytes).
#[derive(Debug, Clone, Copy)]
struct Word<'a> {
    text: &'a str,
    start: usize,
    end: usize,
}

fn words(lower: &str) -> Vec<Word<'_>> {
    let mut out = Vec::new();
    let mut start = None;
    let is_word = |c: char| c.is_alphanumeric() || matches!(c, '\'' | '-' | '_' | '~' | '+');
    for (at, c) in lower.char_indices() {
        match (is_word(c), start) {
            (true, None) => start = Some(at),
            (false, Some(from)) => {
                out.push(Word {
                    text: &lower[from..at],
                    start: from,
                    end: at,
                });
                start = None;
            }
            _ => {}
        }
    }
    if let Some(from) = start {
        out.push(Word {
            text: &lower[from..],
            start: from,
            end: lower.len(),
        });
    }
    out
}

/// A stage verb: its forms ending in `-ing` and its base forms.
const VERBS: &[(&[&str], &[&str], Phase)] = &[
    (
        &[
            "training",
            "fine-tuning",
            "finetuning",
            "pretraining",
            "pre-training",
            "retraining",
            // Its common misspellings in issue threads (`SDXL Traning OOM`, `I am trianing 20
            // images`, `trainning`).
            "traning",
            "trainning",
            "trianing",
            "trainig",
        ],
        // (`lora`: LoRA is a fine-tuning method, Hu et al. 2021, written as the verb after a
        // frame: `CUDA OOM trying to LoRA a 7B model`.)
        &[
            "train",
            "fine-tune",
            "finetune",
            "pretrain",
            "retrain",
            "lora",
        ],
        Phase::TrainingStep,
    ),
    (
        &[
            "generating",
            "inferencing",
            "inferring",
            "sampling",
            "decoding",
            "upscaling",
            "transcribing",
            "evaluating",
            "validating",
            "predicting",
            "denoising",
            // Apps that run a model on the user's media or text: a frame interpolator (RIFE in
            // Flowframes), a captioner, a translator, a summariser, a chat front end.
            "interpolating",
            "captioning",
            "translating",
            "summarizing",
            "chatting",
            // A trained model applied to the user's inputs (session 16): an image edited by a
            // diffusion model (AUTOMATIC1111's and InvokeAI's inpaint / outpaint tabs), sentences
            // or records encoded into vectors (sentence-transformers `encode`, an embedding
            // model), objects detected, tracked or segmented (Ultralytics `predict` / `track`,
            // Detectron2, SAM), text read off pages (OCR), an image super-resolved (Real-ESRGAN),
            // speech synthesised (TTS), a model queried. Each runs the model's forward without a
            // step; loading and training are named by their own words. (Not `test` / `encode`:
            // the reporter testing a fix or a set-up, a text's or a video's encoding; measured,
            // they turned more `unknown` labels than they found the stage.)
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
            "encoding",
            // Documents ingested into a vector store (privateGPT's and Infinity's `ingest`: each
            // chunk embedded), a track's stems separated (Demucs, UVR), speech aligned to its
            // text (forced aligners): a model applied to the user's inputs.
            "ingesting",
            "separating",
            "aligning",
            // A video's or images' objects labelled by a model (SAM 2's video predictor, an
            // auto-annotation tool): the model applied to each frame (session 34).
            "labeling",
            "labelling",
        ],
        &[
            "generate",
            "infer",
            // The noun written as the verb, as reporters often write it (`When trying to
            // inference one image`, `when I inference the model`).
            "inference",
            "sample",
            "decode",
            "upscale",
            "transcribe",
            "evaluate",
            "validate",
            "predict",
            "denoise",
            "interpolate",
            "caption",
            "translate",
            "summarize",
            "chat",
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
            "encode",
            "ingest",
            "separate",
            "align",
        ],
        Phase::Inference,
    ),
    // Starting an app or a server (`when launching XTTS`, `when I launch the server`): its
    // start-up, before it serves; a training launched is the job, not its moment (see
    // `launches_an_app`).
    (&["launching"], &["launch"], Phase::Startup),
    (&["loading"], &["load"], Phase::WeightsLoad),
    // Converting a checkpoint to the engine's format (TensorRT-LLM's `convert_checkpoint.py`,
    // llama.cpp's `convert_hf_to_gguf.py`): `attempting to convert the model`.
    (&["converting"], &["convert"], Phase::FormatConversion),
];

/// Words just before an `-ing` form that place the failure in it (`when training`, `I was
/// generating`, `started fine-tuning`).
const ING_FRAME: &[&str] = &[
    "when",
    "while",
    "whenever",
    "during",
    "upon",
    "am",
    "is",
    "are",
    "was",
    "were",
    "i'm",
    "im",
    "we're",
    "been",
    "start",
    "starts",
    "started",
    "starting",
    "begin",
    "begins",
    "began",
    "keep",
    "currently",
];

/// Words before a base form (`to` or a subject in between) that place the failure in it.
const BASE_FRAME: &[&str] = &[
    "try",
    "tried",
    "trying",
    "tries",
    "attempt",
    "attempted",
    "attempting",
    "click",
    "clicked",
    "clicking",
    // The reporter turning to the stage (`When I went to generate, it OOMed`, `when I go to
    // train the LoRA`): what they set out to do when it failed.
    "went",
    "go",
    "goes",
    "when",
    "whenever",
    "while",
    "once",
];

/// Words before a hit in its sentence that make it advice, a hypothetical or a negation.
const GUARD: &[&str] = &[
    "if",
    "you",
    "you're",
    "your",
    "should",
    "would",
    "could",
    "might",
    "maybe",
    "perhaps",
    "suggest",
    "recommend",
    "please",
    "not",
    "no",
    "never",
    "don't",
    "doesn't",
    "didn't",
    "can't",
    "cannot",
    "isn't",
    "wasn't",
    "without",
    "how",
];

/// Words after a hit, in its clause, that say the stage went well.
const WENT_WELL: &[&str] = &[
    "works",
    "worked",
    "fine",
    "ok",
    "okay",
    "successfully",
    "perfectly",
    "well",
];

/// Units of a training's progress.
const UNITS: &[&str] = &[
    "step",
    "steps",
    "iteration",
    "iterations",
    "iter",
    "iters",
    "epoch",
    "epochs",
    // The plural as reporters misspell it (`when I ran to 35 epoches`).
    "epoches",
    "batch",
    "batches",
];

/// A count of progress: `120`, `~120+`, `2-3`, `22k`, `a few`, `several`, `the first`, `one`.
fn is_count(word: &str) -> bool {
    let digits = word.trim_start_matches('~').trim_end_matches('+');
    let numeric = !digits.is_empty()
        && digits.starts_with(|c: char| c.is_ascii_digit())
        && digits
            .chars()
            .all(|c| c.is_ascii_digit() || matches!(c, '-' | 'k' | ',' | '.'));
    numeric
        || matches!(
            word,
            "few"
                | "several"
                | "some"
                | "first"
                | "second"
                | "third"
                | "one"
                | "two"
                | "three"
                | "four"
                | "five"
                | "ten"
                | "hundred"
                | "thousand"
                | "many"
                | "couple"
        )
}

/// Stage hits of the grammar in one lowercase line: (byte start, byte end, phase).
pub(super) fn hits(lower: &str) -> Vec<(usize, usize, Phase)> {
    let words = words(lower);
    let mut out = Vec::new();
    for (index, word) in words.iter().enumerate() {
        let verb = verb_hit(lower, &words, index);
        if verb.is_none() {
            if let Some(from) =
                job_hit(lower, &words, index).filter(|_| !memory_object(&words, index))
            {
                out.push((words[from].start, word.end, Phase::Inference));
            }
        }
        if let Some((phase, from)) = verb {
            let general =
                APPLY_VERBS.contains(&word.text) && general_case(lower, words[from].start);
            let of_memory = phase == Phase::Inference && memory_object(&words, index);
            if !guarded(lower, &words, from, index) && !general && !of_memory {
                out.push((words[from].start, word.end, phase));
            }
        }
        if let Some((to, phase)) = during_a_kind_of(lower, &words, index) {
            if !guarded(lower, &words, index, to) {
                out.push((word.start, words[to].end, phase));
            }
        }
        if let Some(to) = ran_for_a_while(lower, &words, index) {
            if !guarded(lower, &words, index, to) {
                out.push((word.start, words[to].end, Phase::Inference));
            }
        }
        if let Some((to, guard_to)) = later_run(lower, &words, index) {
            if !guarded(lower, &words, index, guard_to) {
                out.push((word.start, words[to].end, Phase::Inference));
            }
        }
        if let Some(to) = request_fails(lower, &words, index) {
            if !guarded(lower, &words, index, to) {
                out.push((word.start, words[to].end, Phase::Inference));
            }
        }
        if let Some(to) = run_on_inputs(lower, &words, index) {
            if !guarded(lower, &words, index, to) {
                out.push((word.start, words[to].end, Phase::Inference));
            }
        }
        if let Some((from, phase)) = told_in_the_past(lower, &words, index) {
            if !guarded(lower, &words, from, index) {
                out.push((words[from].start, word.end, phase));
            }
        }
        if let Some(to) = made_media(lower, &words, index) {
            if !guarded(lower, &words, index, to) {
                out.push((word.start, words[to].end, Phase::Inference));
            }
        }
        if let Some(from) = running_the_training(lower, &words, index) {
            if !guarded(lower, &words, from, index) {
                out.push((words[from].start, word.end, Phase::TrainingStep));
            }
        }
        if let Some(from) = attempted_inference(lower, &words, index) {
            if !guarded(lower, &words, from, index) {
                out.push((words[from].start, word.end, Phase::Inference));
            }
        }
        if let Some((from, phase)) = started_a_stage(lower, &words, index) {
            if !guarded(lower, &words, from, index) {
                out.push((words[from].start, word.end, phase));
            }
        }
        if let Some((from, to)) = progress_hit(lower, &words, index) {
            if !guarded(lower, &words, from, to) {
                out.push((words[from].start, words[to].end, Phase::TrainingStep));
            }
        }
        if glued_progress(word.text)
            && !guarded(lower, &words, index, index)
            && sentence_reports_a_failure(lower, word.start, word.start)
        {
            out.push((word.start, word.end, Phase::TrainingStep));
        }
        if let Some((from, to)) = before_training_hit(&words, index) {
            if !guarded(lower, &words, from, from)
                && sentence_reports_a_failure(lower, words[from].start, words[to].end)
            {
                out.push((words[from].start, words[to].end, Phase::Startup));
            }
        }
    }
    out
}

/// `during` and a stage named with words of its kind between them (`CUDA OOM during compiled
/// inference`, `OOM during distributed training`, `during LoRA fine-tuning`; session 34: an
/// article and up to [`KIND_WORDS`] words naming its size or model, `during a 131K-token
/// DeepSeek V4 prefill`, `during 128K-token vLLM prefill`): the stage as the fixed phrases read
/// `during inference`. Returns the noun's index and its stage.
fn during_a_kind_of(lower: &str, words: &[Word<'_>], index: usize) -> Option<(usize, Phase)> {
    const STAGES: &[(&str, Phase)] = &[
        ("inference", Phase::Inference),
        ("generation", Phase::Inference),
        ("prediction", Phase::Inference),
        ("evaluation", Phase::Inference),
        ("validation", Phase::Inference),
        // An LLM server's prompt pass (a request's prefill), as `during prefill` is read.
        ("prefill", Phase::Inference),
        // … and its token-by-token pass (`during a regular token decode`).
        ("decode", Phase::Inference),
        ("training", Phase::TrainingStep),
        ("fine-tuning", Phase::TrainingStep),
        ("finetuning", Phase::TrainingStep),
        ("quantization", Phase::FormatConversion),
    ];
    if words.get(index)?.text != "during" {
        return None;
    }
    let stage = |word: &str| {
        STAGES
            .iter()
            .find(|(name, _)| *name == word)
            .map(|(_, p)| *p)
    };
    let mut first = index + 1;
    // An article alone before the noun qualifies it as a word of its kind did before (`during
    // the training`).
    let article = matches!(
        words.get(first)?.text,
        "a" | "an" | "the" | "my" | "our" | "this"
    );
    if article {
        first += 1;
    }
    // The first stage noun within reach; the words before it qualify it.
    let nearest = if article { first } else { first + 1 };
    let noun = (nearest..=first + KIND_WORDS)
        .find(|&at| words.get(at).is_some_and(|word| stage(word.text).is_some()))?;
    let kinds = &words[first..noun];
    // Not two stages (`during training inference`), nor a bare count, a negation, or words that
    // start another phrase (`during loading for training`, `during the second half of
    // training`: the noun is not qualified by them).
    let qualifies = |word: &Word<'_>| {
        stage(word.text).is_none()
            && !word.text.bytes().all(|b| b.is_ascii_digit())
            && !matches!(
                word.text,
                "no" | "not"
                    | "non"
                    | "of"
                    | "for"
                    | "with"
                    | "in"
                    | "on"
                    | "at"
                    | "to"
                    | "from"
                    | "after"
                    | "before"
                    | "and"
                    | "or"
                    | "but"
                    | "while"
                    | "when"
                    | "is"
                    | "was"
                    | "loading"
                    | "saving"
            )
    };
    let span = &lower[words[index].end..words[noun].start];
    let phase = stage(words[noun].text)?;
    // Several words only before a noun that names a model's stage by itself: `generation`,
    // `prediction`, `evaluation` are as often a data structure's or a metric's (`during
    // neighbor list generation`).
    let several = kinds.len() > 1;
    let own_noun = matches!(
        words[noun].text,
        "prefill" | "decode" | "inference" | "training" | "fine-tuning" | "finetuning"
    );
    (kinds.iter().all(qualifies)
        && (!several || own_noun)
        && (!several || !span.contains([',', '.', ';', ':', '!', '?', '(', ')'])))
    .then_some((noun, phase))
}

/// How many words may qualify a stage's noun after `during` (see [`during_a_kind_of`]).
const KIND_WORDS: usize = 4;

/// The `-ing` forms of a model applied to inputs that name the stage with no frame around them
/// (`Transcribing a 2-hour file runs out of memory`, `CUDA OOM translating documents with NLLB`):
/// an app or script that applies a model has loading as its one other stage, named by its own
/// words (tests/fixtures/corpus/AUDIT.md, "Session 16: a model applied to inputs"). Not
/// `decoding` / `sampling` (settings' names: `speculative decoding`, `sampling params`), not
/// `embedding` (a layer: `resize the embedding`), not `evaluating` / `validating` (a check of a
/// value as often as a model's evaluation).
const JOB_INGS: &[&str] = &[
    "labeling",
    "labelling",
    "transcribing",
    "translating",
    "generating",
    "upscaling",
    "inpainting",
    "outpainting",
    "detecting",
    "tracking",
    "segmenting",
    "recognizing",
    "recognising",
    "classifying",
    "captioning",
    "summarizing",
    "interpolating",
    "denoising",
    "predicting",
    "inferencing",
    "inferring",
    "super-resolving",
    "colorizing",
    "synthesizing",
    "vectorizing",
    "processing",
    "parsing",
    "querying",
];

/// The base forms of [`JOB_INGS`] after `to` (`I use whisper to transcribe long audio and it
/// runs out of memory`), and `embed` (`to embed the corpus`).
const JOB_BASES: &[&str] = &[
    "transcribe",
    "translate",
    "generate",
    "upscale",
    "inpaint",
    "outpaint",
    "detect",
    "track",
    "segment",
    "recognize",
    "recognise",
    "classify",
    "caption",
    "summarize",
    "interpolate",
    "denoise",
    "predict",
    "infer",
    "embed",
    "super-resolve",
    "colorize",
    "synthesize",
    "vectorize",
    "process",
    "parse",
    "query",
];

/// Words of a sentence that name another stage (training, loading): the act of applying a model
/// in it is then no evidence of its own (the other stage's words are read by their rules).
const OTHER_STAGE_WORDS: &[&str] = &[
    "train",
    "training",
    "trained",
    "fine-tune",
    "fine-tuning",
    "finetune",
    "finetuning",
    "load",
    "loading",
    "loaded",
    "loads",
    "epoch",
    "epochs",
    "epoches",
    "backward",
];

/// The act of applying a model named without a frame, in a sentence that reports the failure
/// and names no other stage (measured: without the failure in its sentence, the `-ing` forms
/// were read in replies' advice, in nouns such as `assertion tracking was not enabled`, and in
/// code comments): an `-ing` form of [`JOB_INGS`] or `to` with a base of
/// [`JOB_BASES`], whose object is not the machine or the failure (index of the first word).
fn job_hit(lower: &str, words: &[Word<'_>], index: usize) -> Option<usize> {
    let word = words[index].text;
    let from = if JOB_INGS.contains(&word) {
        index
    } else if JOB_BASES.contains(&word)
        && index
            .checked_sub(1)
            .is_some_and(|before| words[before].text == "to")
    {
        index - 1
    } else {
        return None;
    };
    // A script's or a function's name (`generate.py`, `processing_utils`), a setting named
    // (`generating steps`).
    if lower[words[index].end..].starts_with(['.', '_', '/', '(', '='])
        && !lower[words[index].end..].starts_with(". ")
    {
        return None;
    }
    if words.get(index + 1).is_some_and(|next| {
        matches!(
            next.text,
            "steps" | "strategy" | "method" | "params" | "parameters" | "settings" | "config"
        )
    }) {
        return None;
    }
    if !applies_to_inputs_strict(lower, words, index)
        && !subject_of_the_failure(lower, words, index)
    {
        return None;
    }
    let (start, end) = (words[from].start, words[index].end);
    if !sentence_reports_a_failure(lower, start, end) || sentence_guarded(lower, start, end) {
        return None;
    }
    let sentence_start = lower[..start]
        .rfind(['.', '!', '?', ';', '\n'])
        .map_or(0, |at| at + 1);
    let sentence_end = lower[end..]
        .find(['.', '!', '?', ';', '\n'])
        .map_or(lower.len(), |at| end + at);
    let other_stage = words
        .iter()
        .filter(|w| w.start >= sentence_start && w.end <= sentence_end)
        .any(|w| OTHER_STAGE_WORDS.contains(&w.text));
    (!other_stage).then_some(from)
}

/// The `-ing` form opens its sentence as the subject of a verb of failing (`Inpainting gives
/// Out of memory (1080 TI)`, `Upscaling crashes with OOM`): the act named as what failed, as a
/// title names the training (`Training OOM`, AUDIT.md session 15, rule 2b), whatever its object.
fn subject_of_the_failure(lower: &str, words: &[Word<'_>], index: usize) -> bool {
    let opens = lower[..words[index].start]
        .trim_end_matches([' ', '\t', '#', '*', '"', '\''])
        .chars()
        .next_back()
        .is_none_or(|c| matches!(c, '.' | '!' | '?' | ':' | '\n' | ']'));
    opens
        && words[index].text.ends_with("ing")
        && words.get(index + 1).is_some_and(|next| {
            matches!(
                next.text,
                "gives"
                    | "give"
                    | "causes"
                    | "throws"
                    | "raises"
                    | "crashes"
                    | "fails"
                    | "triggers"
                    | "results"
                    | "leads"
            )
        })
}

/// [`applies_to_inputs`] for every verb of [`JOB_INGS`] / [`JOB_BASES`], not only the
/// session's [`APPLY_VERBS`].
fn applies_to_inputs_strict(lower: &str, words: &[Word<'_>], index: usize) -> bool {
    let mut next = index + 1;
    while words.get(next).is_some_and(|w| {
        matches!(
            w.text,
            "the" | "a" | "an" | "my" | "this" | "that" | "our" | "these" | "those" | "some"
        )
    }) {
        next += 1;
    }
    let object = words
        .get(next)
        .filter(|w| !lower[words[index].end..w.start].contains([',', '.', ';', ':', '!', '?']))
        .map(|w| w.text);
    if object.is_some_and(|w| NOT_INPUTS.contains(&w))
        || matches!(
            words.get(index + 1).map(|w| w.text),
            Some("it" | "this" | "that")
        )
    {
        return false;
    }
    applies_to_inputs(lower, words, index)
}

/// A count glued to its unit, as code-mixed threads write it (`1epoch이 돌아가는 경우`, an
/// epoch that ran; `训练到3epoch`, `200steps后`, `第3个epoch时`, `50步的时候`): a training's progress. The
/// count starts the word or follows a CJK letter; the unit is ASCII, and a CJK letter or nothing
/// follows it (`model_1epoch.pt` is a file name).
fn glued_progress(word: &str) -> bool {
    word.char_indices().any(|(at, c)| {
        let starts = c.is_ascii_digit()
            && word[..at]
                .chars()
                .next_back()
                .is_none_or(|before| !before.is_ascii());
        if !starts {
            return false;
        }
        let rest = &word[at..];
        let after = rest.trim_start_matches(|c: char| c.is_ascii_digit());
        let ordinal = word[..at].ends_with('第');
        // Chinese `步` (steps) glued to a count, not an ordinal (`每次50步的时候oom`, at step 50
        // each time; `第1步` is an instruction's step).
        if !ordinal && after.starts_with('步') {
            return true;
        }
        let after = if ordinal {
            after.trim_start_matches(['个', '個'])
        } else {
            after
        };
        let unit_end = after
            .find(|c: char| !c.is_ascii_alphabetic())
            .unwrap_or(after.len());
        let (unit, tail) = after.split_at(unit_end);
        tail.chars().next().is_none_or(|next| !next.is_ascii())
            && matches!(
                unit,
                "epoch"
                    | "epochs"
                    | "epoches"
                    | "step"
                    | "steps"
                    | "iter"
                    | "iters"
                    | "iteration"
                    | "iterations"
            )
    })
}

/// Whether the word goes on as a file's or an identifier's name (`finetune.py`,
/// `inference_server`): a name, not the stage's noun.
fn part_of_a_name(lower: &str, word: Word<'_>) -> bool {
    lower[word.end..]
        .strip_prefix(['.', '_'])
        .is_some_and(|rest| rest.starts_with(|c: char| c.is_ascii_alphanumeric()))
}

/// A noun of the training itself (`training`, `fine-tuning`, `pretraining`).
fn training_noun(word: &str) -> bool {
    matches!(
        word,
        "training" | "fine-tuning" | "finetuning" | "pretraining" | "pre-training"
    )
}

/// The failure placed before a training's first step, in its set-up: `before training can
/// begin`, `before the training starts`, `before any training begins`, `before the first iteration`, `when the training is
/// going to start`, `the training was about to begin` (index of the first word, of the last).
fn before_training_hit(words: &[Word<'_>], index: usize) -> Option<(usize, usize)> {
    let text = |i: usize| words.get(i).map(|w| w.text);
    let training = |w: Option<&str>| w.is_some_and(training_noun);
    let starts = |w: Option<&str>| {
        matches!(
            w,
            Some("start" | "starts" | "started" | "begin" | "begins" | "began" | "begun")
        )
    };
    let mut next = index + 1;
    // (`before any training begins`.)
    if matches!(text(next), Some("the" | "any")) {
        next += 1;
    }
    match text(index)? {
        "before" | "until" => {
            if text(next) == Some("first")
                && matches!(
                    text(next + 1),
                    Some("step" | "iteration" | "epoch" | "training" | "batch")
                )
            {
                return Some((index, next + 1));
            }
            if !training(text(next)) {
                return None;
            }
            let mut last = next + 1;
            if matches!(text(last), Some("can" | "could" | "has" | "had" | "even")) {
                last += 1;
            }
            if starts(text(last)) {
                Some((index, last))
            } else if text(last).is_none_or(|w| !w.ends_with("ing")) {
                // `before training, the model …` / `before training even` (no verb).
                (text(last).is_none() || matches!(text(last), Some("even" | "any" | "at")))
                    .then_some((index, next))
            } else {
                None
            }
        }
        // `the training is going to start`, `training was about to begin`.
        word if training(Some(word)) => {
            let mut last = index + 1;
            if !matches!(text(last), Some("is" | "was" | "were" | "are")) {
                return None;
            }
            last += 1;
            match (text(last), text(last + 1)) {
                (Some("going" | "about"), Some("to")) => last += 2,
                _ => return None,
            }
            starts(text(last)).then_some((index, last))
        }
        _ => None,
    }
}

/// A stage verb in a frame that places the failure in it: (phase, index of the frame's first
/// word).
fn verb_hit(lower: &str, words: &[Word<'_>], index: usize) -> Option<(Phase, usize)> {
    let word = words[index].text;
    let at = |back: usize| index.checked_sub(back).map(|i| words[i].text);
    let (ing, phase) = VERBS.iter().find_map(|(ings, bases, phase)| {
        if ings.contains(&word) {
            Some((true, *phase))
        } else if bases.contains(&word) {
            Some((false, *phase))
        } else {
            None
        }
    })?;
    // The two words before must be in the same clause as the verb.
    let joined = |back: usize| {
        index
            .checked_sub(back)
            .is_some_and(|i| !lower[words[i].end..words[i + 1].start].contains([',', '.', ';']))
    };
    let from = if ing {
        // `when training`, `while I was generating`, `I'm fine-tuning`.
        let frame = (1..=3).find(|&back| {
            (1..=back).all(joined) && at(back).is_some_and(|w| ING_FRAME.contains(&w))
        })?;
        index - frame
    } else {
        // `try to load`, `clicked to generate`, `when I train`, `whenever we generate`,
        // `I train models`.
        let subject = |w: Option<&str>| matches!(w, Some("i" | "we"));
        // The stage that could not be done, in a sentence that reports the failure: `Can not
        // train llama-7b due to OOM`, `unable to load the model: out of memory`, `it fails to
        // generate with 24 GB`, `I want to train the 7B model, but it runs out of memory`.
        let could_not = if at(1) == Some("to") && joined(1) && joined(2) {
            at(2)
                .filter(|w| {
                    matches!(
                        *w,
                        "unable" | "fail" | "fails" | "failed" | "failing" | "want" | "wanted"
                    )
                })
                .map(|_| 2)
        } else if matches!(at(1), Some("cannot" | "can't" | "couldn't")) && joined(1) {
            Some(1)
        } else if at(1) == Some("even")
            && matches!(at(2), Some("cannot" | "can't" | "couldn't"))
            && joined(2)
        {
            // `I can't even train batch size 1 at size 768,768`.
            Some(2)
        } else if at(1) == Some("not") && matches!(at(2), Some("can" | "could")) && joined(2) {
            Some(2)
        } else {
            None
        };
        // The failure reported in the sentence, or for a training a per-step setting there
        // (`Post update I can't even train batch size 1`: AUDIT.md session 15, rule 2e).
        let tied = |_: &usize| {
            reports_a_failure(lower, words[index].end)
                || (phase == Phase::TrainingStep && {
                    let rest = &lower[words[index].end..];
                    let stop = rest.find(['.', '!', '?', '\n']).unwrap_or(rest.len());
                    super::job::per_step_setting(&rest[..stop])
                })
        };
        if let Some(back) = could_not.filter(tied) {
            index - back
        } else if at(1) == Some("to") && joined(1) && joined(2) {
            if at(2).is_some_and(|w| BASE_FRAME.contains(&w)) {
                index - 2
            } else {
                // `When I use 24G Nvidia Titan RTX GPU to train the Task10_Colon data, …`: a
                // clause of time whose verb is a means (`use`) and whose purpose is the stage.
                used_to(lower, words, index)?
            }
        } else if let Some(back) = pressed_button(&at)
            .filter(|&back| (1..=back).all(joined) && reports_a_failure(lower, words[index].end))
        {
            // The app's button named by its verb in a sentence that reports the failure (`When
            // I click on generate, after a while I got the following error`): the stage it
            // starts (not `After clicking on Generate and waiting for the download, it takes
            // hours`, where what ran is not told).
            index - back
        } else if matches!(at(1), Some("when" | "while" | "whenever"))
            && joined(1)
            && !lower[words[index].end..].starts_with(['.', '_', '/', '-'])
        {
            // A title's `OOM when finetune`, `error when generate`: the subject dropped, as
            // issue titles drop it (the verb is not a script's name: `when train.py runs`).
            index - 1
        } else if subject(at(1)) && joined(1) {
            if at(2).is_some_and(|w| BASE_FRAME.contains(&w)) && joined(2) {
                index - 2
            } else if (index == 1 || !joined(2)) && reports_a_failure(lower, words[index].end) {
                // The subject opens the clause of a sentence that reports the failure: `I
                // train models … but I meet this error` (not `Currently, we train the model
                // on 8 GPUs`).
                index - 1
            } else {
                return None;
            }
        } else {
            return None;
        }
    };
    if phase == Phase::WeightsLoad && !loads_weights(words, index) {
        return None;
    }
    if phase == Phase::Startup && !launches_an_app(words, index) {
        return None;
    }
    if phase == Phase::FormatConversion && converts_a_document(words, index) {
        return None;
    }
    if phase == Phase::Inference && !applies_to_inputs(lower, words, index) {
        return None;
    }
    // The noun written as the verb with the job's set-up in its clause (`OOM when inference
    // using python script`): the inference job named by how it was run, as `Training on T4:`
    // names the training's (AUDIT.md, session 15, rule 1; session 16, rule 5).
    if word == "inference" {
        let rest = &lower[words[index].end..];
        let clause = &rest[..rest
            .find([',', '.', ';', ':', '!', '?', '\n'])
            .unwrap_or(rest.len())];
        // (Or a cloud machine named as where it ran: `I am trying to run inference using aws
        // g3s.xlarge`, session 51.)
        let cloud = clause
            .split(|c: char| !c.is_ascii_alphanumeric())
            .any(|word| matches!(word, "aws" | "ec2" | "sagemaker" | "runpod"));
        if super::job::names_a_set_up(clause) || cloud {
            return None;
        }
    }
    // `When deploying our training code`, `while reading the inference script`: the stage's
    // word names a thing of it (its code, its data), the object of another verb.
    if ing
        && words.get(index + 1).is_some_and(|next| {
            matches!(
                next.text,
                "code"
                    | "codes"
                    | "script"
                    | "scripts"
                    | "data"
                    | "dataset"
                    | "datasets"
                    | "config"
                    | "configs"
                    | "framework"
                    | "repo"
                    | "recipe"
                    | "cmd"
                    | "command"
                    | "commands"
                    | "example"
                    | "examples"
            )
        })
        && !ING_FRAME.contains(&words[index - 1].text)
    {
        return None;
    }
    // `sampling steps`, `decoding strategy`: a setting named, not the stage running.
    if words.get(index + 1).is_some_and(|next| {
        matches!(
            next.text,
            "steps" | "strategy" | "method" | "params" | "parameters" | "settings"
        )
    }) {
        return None;
    }
    Some((phase, from))
}

/// How many words back a button is pressed before a stage's verb (`click on generate`, `hit
/// generate`, `clicking the train`), if it is.
fn pressed_button<'a>(at: &impl Fn(usize) -> Option<&'a str>) -> Option<usize> {
    const PRESS: &[&str] = &[
        "click", "clicked", "clicking", "clicks", "hit", "hitting", "press", "pressed", "pressing",
    ];
    let press = |back: usize| at(back).is_some_and(|w| PRESS.contains(&w));
    if press(1) {
        Some(1)
    } else if matches!(at(1), Some("on" | "the")) && press(2) {
        Some(2)
    } else {
        None
    }
}

/// `when I use X to <verb>`, `while we were using X to <verb>` (index of `when`), or `I am
/// using X to <verb>` opening a sentence that reports the failure (index of the subject), up to
/// eight words of X between the means and `to`, all in one clause: the stage's verb as the
/// purpose of what the reporter was doing when it failed.
fn used_to(lower: &str, words: &[Word<'_>], index: usize) -> Option<usize> {
    let to = index.checked_sub(1)?;
    let from = to.saturating_sub(10);
    let means = (from..to)
        .rev()
        .find(|&at| matches!(words[at].text, "use" | "used" | "using"))?;
    if lower[words[means].end..words[to].start].contains([',', '.', ';', ':', '!', '?']) {
        return None;
    }
    let mut at = means.checked_sub(1)?;
    if matches!(words[at].text, "am" | "was" | "were" | "are") {
        at = at.checked_sub(1)?;
    }
    if !matches!(words[at].text, "i" | "we") {
        return None;
    }
    // The subject opening its sentence or clause in a sentence that reports the failure: `I am
    // using your code to train PointLK, but my card only has 8g … the problem of video memory
    // allocation` (not `We use 8 GPUs to train the model.`, session 48).
    let opens = at == 0
        || lower[words[at - 1].end..words[at].start].contains([',', '.', ';', ':', '!', '?', '\n']);
    if opens && reports_a_failure(lower, words[index].end) {
        return Some(at);
    }
    let when = at.checked_sub(1)?;
    let joined = !lower[words[when].end..words[at].start].contains([',', '.', ';', ':']);
    (joined && matches!(words[when].text, "when" | "while" | "whenever")).then_some(when)
}

/// Whether the sentence around `start..end` reports a failure (`it crashes before training can
/// begin`, `when the training is going to start, it runs out of memory`).
fn sentence_reports_a_failure(lower: &str, start: usize, end: usize) -> bool {
    let from = lower[..start]
        .rfind(['.', '!', '?', '\n'])
        .map_or(0, |at| at + 1);
    let before = &lower[from..start];
    reports_a_failure(lower, end) || FAILURE_WORDS.iter().any(|word| before.contains(word))
}

/// Words that report a failure (`reports_a_failure`).
const FAILURE_WORDS: &[&str] = &[
    "oom",
    // `My GPU breaks while running to the 10000 steps of 100000`.
    "breaks",
    "broke ",
    "out of memory",
    "error",
    "crash",
    "fail",
    "kill",
    "exception",
    "meet",
    // `I ran across a problem when trying to use inference`, `there is always the problem of
    // video memory allocation`.
    "a problem",
    "the problem",
    "not enough",
    "insufficient",
];

/// Whether the sentence from `end` on reports a failure (`… but I meet this error`).
fn reports_a_failure(lower: &str, end: usize) -> bool {
    let rest = &lower[end..];
    // A full stop inside a name (`torch.OutOfMemoryError`, `train.py`) ends no sentence.
    let stop = rest
        .char_indices()
        .find(|&(at, c)| {
            matches!(c, '!' | '?' | '\n')
                || (c == '.'
                    && rest[at + 1..]
                        .chars()
                        .next()
                        .is_none_or(|next| !next.is_ascii_alphanumeric()))
        })
        .map_or(rest.len(), |(at, _)| at);
    FAILURE_WORDS.iter().any(|word| rest[..stop].contains(word))
}

/// A run that went on for a while before failing, with no training or load named in its
/// sentence (`after running for a period of time, it starts to report errors`, `cuda failed with
/// error out of memory after sometime of running`): it had loaded and was running its model on
/// what it was given, a server's requests or an app's inputs (session 18). The index of the
/// last word.
fn ran_for_a_while(lower: &str, words: &[Word<'_>], index: usize) -> Option<usize> {
    // Units of a run's time, a wall clock's or a simulation's.
    const RUN_TIMES: &[&str] = &["minutes", "hours", "days", "picoseconds", "nanoseconds"];
    if !matches!(words[index].text, "after" | "following") {
        return None;
    }
    let text = |i: usize| words.get(i).map(|w| w.text);
    let duration_from = |i: usize| -> Option<usize> {
        match (text(i), text(i + 1), text(i + 2), text(i + 3)) {
            (Some("sometime"), _, _, _) => Some(i),
            (Some("some"), Some("time"), _, _) => Some(i + 1),
            (Some("a"), Some("while"), _, _) => Some(i + 1),
            (Some("a"), Some("period"), Some("of"), Some("time")) => Some(i + 3),
            (Some("a"), Some("few"), Some("hours" | "minutes"), _) => Some(i + 2),
            // A time counted (`after running for 2 hours`), or a simulation's (`after running
            // for 17.5 picoseconds` of molecular dynamics; session 45).
            (Some(count), Some(unit), _, _) if is_count(count) && RUN_TIMES.contains(&unit) => {
                Some(i + 1)
            }
            // (A decimal count is two words here: `17.5`.)
            (Some(whole), Some(part), Some(unit), _)
                if whole.bytes().all(|b| b.is_ascii_digit())
                    && part.bytes().all(|b| b.is_ascii_digit())
                    && RUN_TIMES.contains(&unit) =>
            {
                Some(i + 2)
            }
            _ => None,
        }
    };
    // `after several inference`, `after 20 requests`, `after a few generations`: runs of the
    // model counted.
    let runs = |i: usize| {
        matches!(
            text(i),
            Some(
                "inference"
                    | "inferences"
                    | "predictions"
                    | "requests"
                    | "generations"
                    | "queries"
                    | "calls"
                    | "completions"
            )
        )
    };
    // (`a few more`, `3 more`: runs after others.)
    let more = |i: usize| i + usize::from(text(i) == Some("more"));
    let counted = if text(index + 1) == Some("a") && text(index + 2) == Some("few") {
        Some(more(index + 3))
    } else if text(index + 1).is_some_and(is_count)
        && matches!(text(index + 2), Some("or" | "to"))
        && text(index + 3).is_some_and(is_count)
    {
        // `after 1 or 2 generations`, `after 3 to 5 requests`.
        Some(index + 4)
    } else {
        text(index + 1)
            .is_some_and(is_count)
            .then_some(more(index + 2))
    };
    // One word may name what was run (`a few more code completions`).
    let counted = counted.map(|unit| {
        if !runs(unit) && runs(unit + 1) && text(unit).is_some_and(|w| w.len() > 1) {
            unit + 1
        } else {
            unit
        }
    });
    let last = if let Some(unit) = counted.filter(|&unit| runs(unit)) {
        unit
    } else if matches!(text(index + 1), Some("running" | "serving" | "working"))
        && text(index + 2) == Some("for")
    {
        duration_from(index + 3)?
    } else {
        let end = duration_from(index + 1)?;
        if text(end + 1) != Some("of") || !matches!(text(end + 2), Some("running" | "serving")) {
            return None;
        }
        end + 2
    };
    if !sentence_reports_a_failure(lower, words[index].start, words[last].end) {
        return None;
    }
    let sentence_start = lower[..words[index].start]
        .rfind(['.', '!', '?', ';', '\n'])
        .map_or(0, |at| at + 1);
    let sentence_end = lower[words[last].end..]
        .find(['.', '!', '?', ';', '\n'])
        .map_or(lower.len(), |at| words[last].end + at);
    let other_stage = words
        .iter()
        .filter(|w| w.start >= sentence_start && w.end <= sentence_end)
        .any(|w| OTHER_STAGE_WORDS.contains(&w.text));
    (!other_stage).then_some(last)
}

/// A request (or requests) as the subject of the failure (`same request family also OOMs at
/// 0.975`, `long requests OOM the server`, `the 128k request crashes with OOM`): a request being
/// served failed, as a request posted or handled is (session 31) and an act named as what failed
/// is (session 18, rule 7). A few words may stand between (`family`, `also`, `still`); not a
/// pull or feature request, nor a sentence naming a load or a training. The index of the verb.
fn request_fails(lower: &str, words: &[Word<'_>], index: usize) -> Option<usize> {
    if !matches!(words[index].text, "request" | "requests") {
        return None;
    }
    if index
        .checked_sub(1)
        .is_some_and(|before| matches!(words[before].text, "pull" | "feature" | "merge"))
    {
        return None;
    }
    let verb = (index + 1..=index + 3).find(|&at| {
        words.get(at).is_some_and(|word| {
            matches!(
                word.text,
                "oom" | "ooms" | "oomed" | "crashes" | "crashed" | "fails" | "failed"
            )
        })
    })?;
    let between = words[index + 1..verb].iter().all(|word| {
        matches!(
            word.text,
            "family" | "families" | "type" | "also" | "still" | "then" | "too" | "again" | "just"
        )
    });
    let span = &lower[words[index].end..words[verb].start];
    if !between || span.contains([',', '.', ';', ':', '!', '?']) {
        return None;
    }
    if !sentence_reports_a_failure(lower, words[index].start, words[verb].end) {
        return None;
    }
    (!sentence_names_another_stage(lower, words, words[index].start, words[verb].end))
        .then_some(verb)
}

/// Whether the sentence around `start..end` of `lower` (from the last `.`/`!`/`?`/`;`/line end
/// before it to the next one after it) holds a word of another stage ([`OTHER_STAGE_WORDS`]).
fn sentence_names_another_stage(lower: &str, words: &[Word], start: usize, end: usize) -> bool {
    let sentence_start = lower[..start]
        .rfind(['.', '!', '?', ';', '\n'])
        .map_or(0, |at| at + 1);
    let sentence_end = lower[end..]
        .find(['.', '!', '?', ';', '\n'])
        .map_or(lower.len(), |at| end + at);
    words
        .iter()
        .filter(|w| w.start >= sentence_start && w.end <= sentence_end)
        .any(|w| OTHER_STAGE_WORDS.contains(&w.text))
}

/// A model run on the user's media in a sentence that reports the failure and names no other
/// stage (`when I run DAV2 using the same image and model … I encounter a torch.OutOfMemoryError`,
/// `# Run YOLO11 tracking on the frame`): `run` / `running` / `ran`, up to three words of what
/// ran, then `on` / `using` / `with` and an image, a video, an audio or a document (session 16,
/// rule 1: the model applied to inputs). The index of the input's word.
fn run_on_inputs(lower: &str, words: &[Word<'_>], index: usize) -> Option<usize> {
    if !matches!(words[index].text, "run" | "running" | "ran") {
        return None;
    }
    let media = |w: &str| {
        matches!(
            w,
            "image"
                | "images"
                | "video"
                | "videos"
                | "audio"
                | "photo"
                | "photos"
                | "picture"
                | "pictures"
                | "frame"
                | "frames"
                | "document"
                | "documents"
                | "pdf"
                | "pdfs"
        )
    };
    let preposition = (index + 1..(index + 5).min(words.len()))
        .find(|&i| matches!(words[i].text, "on" | "using" | "with"))?;
    let mut next = preposition + 1;
    while words.get(next).is_some_and(|w| {
        matches!(
            w.text,
            "the" | "a" | "an" | "my" | "this" | "same" | "some" | "each" | "every"
        )
    }) {
        next += 1;
    }
    let input = words.get(next).filter(|w| media(w.text))?;
    let span = &lower[words[index].start..input.end];
    if span.contains([',', '.', ';', ':', '!', '?']) {
        return None;
    }
    if !sentence_reports_a_failure(lower, words[index].start, input.end) {
        return None;
    }
    let sentence_start = lower[..words[index].start]
        .rfind(['.', '!', '?', ';', '\n'])
        .map_or(0, |at| at + 1);
    let sentence_end = lower[input.end..]
        .find(['.', '!', '?', ';', '\n'])
        .map_or(lower.len(), |at| input.end + at);
    let other_stage = words
        .iter()
        .filter(|w| w.start >= sentence_start && w.end <= sentence_end)
        .any(|w| OTHER_STAGE_WORDS.contains(&w.text));
    (!other_stage).then_some(next)
}

/// An image, a video or a clip made by the model, in a clause of time or an attempt, in a
/// sentence that reports the failure (`error while trying to create an image`, `when I try to
/// make a video it crashes`, `OOM when rendering the animation`): a generation, the model
/// applied to the user's prompt (session 16, rule 1). `index` is the verb; the index of the
/// made thing's noun.
fn made_media(lower: &str, words: &[Word<'_>], index: usize) -> Option<usize> {
    let ing = match words[index].text {
        "creating" | "making" | "rendering" => true,
        "create" | "make" | "render" => false,
        _ => return None,
    };
    let framed = if ing {
        index
            .checked_sub(1)
            .is_some_and(|i| ING_FRAME.contains(&words[i].text))
    } else {
        let to = index.checked_sub(1);
        match to.map(|i| words[i].text) {
            Some("to") => to
                .and_then(|i| i.checked_sub(1))
                .is_some_and(|i| BASE_FRAME.contains(&words[i].text)),
            Some("i" | "we") => to
                .and_then(|i| i.checked_sub(1))
                .is_some_and(|i| matches!(words[i].text, "when" | "whenever" | "while")),
            _ => false,
        }
    };
    if !framed {
        return None;
    }
    let mut next = index + 1;
    while next < words.len().min(index + 4)
        && matches!(
            words[next].text,
            "a" | "an" | "the" | "my" | "any" | "new" | "single" | "short" | "longer" | "long"
        )
    {
        next += 1;
    }
    let noun = words.get(next)?;
    let media = matches!(
        noun.text,
        "image"
            | "images"
            | "picture"
            | "pictures"
            | "photo"
            | "photos"
            | "video"
            | "videos"
            | "animation"
            | "clip"
            | "song"
            | "img"
    );
    let from = index
        .checked_sub(2)
        .map_or(words[index].start, |i| words[i].start);
    (media
        && !lower[from..noun.end].contains([',', '.', ';', ':', '!', '?'])
        && sentence_reports_a_failure(lower, words[index].start, noun.end))
    .then_some(next)
}

/// A training told in the past with a word of time, in a sentence that reports the failure
/// (`When I trained large-scale datasets, the GPU ran out of memory`): the whole story told in
/// the past, the training was running when it failed (session 15, rule 2a). A past form alone
/// (`a model trained for 300 epochs`) still names a stage that ended.
fn told_in_the_past(lower: &str, words: &[Word<'_>], index: usize) -> Option<(usize, Phase)> {
    let phase = match words[index].text {
        "trained" | "finetuned" | "fine-tuned" | "pretrained" => Phase::TrainingStep,
        // A model applied to inputs, told the same way (`when I evaluated the trained model on
        // the benchmark`, `When I generated a 1024x1024 image, it ran out of memory`).
        "generated" | "evaluated" | "inferred" | "inferenced" | "predicted" | "transcribed"
        | "upscaled" | "sampled" | "synthesized" | "rendered" | "captioned" | "translated" => {
            Phase::Inference
        }
        _ => return None,
    };
    let subject = index.checked_sub(1)?;
    let frame = subject.checked_sub(1)?;
    if !matches!(words[subject].text, "i" | "we")
        || !matches!(words[frame].text, "when" | "while" | "whenever")
    {
        return None;
    }
    // `when I trained to 600 iterations` is the progress reading's (`progress_hit`).
    if matches!(
        words.get(index + 1).map(|w| w.text),
        Some("to" | "for" | "until" | "till" | "up")
    ) {
        return None;
    }
    let span = &lower[words[frame].start..words[index].end];
    (!span.contains([',', '.', ';', ':'])
        && sentence_reports_a_failure(lower, words[frame].start, words[index].end))
    .then_some((frame, phase))
}

/// A word of time, a verb of running and the training as its object (`while performing the
/// training`, `while running training`, `while starting epoch`): the training's course, as
/// `while training` is (AUDIT.md, session 15, rule 2a; session 18). Not `launching` (a
/// training launched is the job, session 14). `index` is the training's noun; the index of the
/// word of time.
fn running_the_training(lower: &str, words: &[Word<'_>], index: usize) -> Option<usize> {
    // (Session 34: a fine-tune named as a noun, `OOM when running fine-tune in 4 A100`; not a
    // script's name, `when running finetune.py`, the job's command.)
    let noun = matches!(words[index].text, "fine-tune" | "finetune")
        && !part_of_a_name(lower, words[index]);
    if !noun && !training_noun(words[index].text) && words[index].text != "epoch" {
        return None;
    }
    let mut verb = index.checked_sub(1)?;
    if matches!(
        words[verb].text,
        "the" | "a" | "an" | "my" | "our" | "this" | "its"
    ) {
        verb = verb.checked_sub(1)?;
    }
    if !matches!(
        words[verb].text,
        "running" | "performing" | "doing" | "starting" | "executing" | "beginning"
    ) {
        return None;
    }
    let frame = verb.checked_sub(1)?;
    if !matches!(
        words[frame].text,
        "while" | "when" | "during" | "upon" | "whilst"
    ) {
        return None;
    }
    let span = &lower[words[frame].start..words[index].start];
    (!span.contains([',', '.', ';', ':', '!', '?'])).then_some(frame)
}

/// The model's inference named as what was tried or done, in a clause of time or with the
/// reporter as its subject, in a sentence that reports the failure (`OOM when attempting
/// inference`, `a problem when trying to use inference with this model`, `I get this error when
/// I try inference with batch 4`, `OOM while performing inference on a video`). `index` is the
/// noun; the index of the word that opens the clause.
fn attempted_inference(lower: &str, words: &[Word<'_>], index: usize) -> Option<usize> {
    if !matches!(words[index].text, "inference" | "inferences") {
        return None;
    }
    // The noun as a name's part is another thing (`inference server`, `inference.py`).
    if part_of_a_name(lower, words[index])
        || words.get(index + 1).is_some_and(|next| {
            matches!(
                next.text,
                "server" | "service" | "api" | "endpoint" | "engine" | "script" | "code"
            )
        })
    {
        return None;
    }
    const TRY: &[&str] = &["attempting", "attempt", "trying", "try", "tries", "tried"];
    const DO: &[&str] = &[
        "use",
        "using",
        "perform",
        "performing",
        "do",
        "doing",
        "run",
        "running",
        "make",
        "making",
        "conduct",
        "conducting",
    ];
    let mut at = index.checked_sub(1)?;
    if matches!(words[at].text, "the" | "an" | "a" | "model" | "model's") {
        at = at.checked_sub(1)?;
    }
    // `when I went to inference, GPU0 went OOM`: the reporter turned to the stage.
    if words[at].text == "to"
        && at
            .checked_sub(1)
            .is_some_and(|went| matches!(words[went].text, "went" | "go" | "goes"))
    {
        at -= 1;
    }
    let verb = words[at].text;
    if DO.contains(&verb) {
        // `trying to use inference`: the attempt before it opens the clause.
        if let Some(to) = at.checked_sub(1).filter(|to| words[*to].text == "to") {
            if to > 0 && TRY.contains(&words[to - 1].text) {
                at = to - 1;
            }
        }
    } else if !TRY.contains(&verb) && !matches!(verb, "went" | "go" | "goes") {
        return None;
    }
    let opener = at.checked_sub(1)?;
    let opener = if matches!(words[opener].text, "i" | "we") {
        opener
            .checked_sub(1)
            .filter(|frame| matches!(words[*frame].text, "when" | "while" | "whenever"))
            .unwrap_or(opener)
    } else if matches!(
        words[opener].text,
        "when" | "while" | "whilst" | "upon" | "whenever"
    ) {
        opener
    } else {
        return None;
    };
    let span = &lower[words[opener].start..words[index].start];
    (!span.contains([',', '.', ';', ':', '!', '?'])
        && sentence_reports_a_failure(lower, words[opener].start, words[index].end))
    .then_some(opener)
}

/// A stage named as what the job started, in a sentence that reports the failure after it
/// (`It started inference half of the test data and then displayed this error`, `it began
/// the generation, then crashed with OOM`): the stage had begun when the failure came. Not a
/// server or a service started (`started the inference server`: the start-up). `index` is the
/// stage's noun; the index of the verb that starts it.
fn started_a_stage(lower: &str, words: &[Word<'_>], index: usize) -> Option<(usize, Phase)> {
    let phase = match words[index].text {
        "inference" | "generation" | "evaluation" | "validation" | "prediction" | "sampling" => {
            Phase::Inference
        }
        "training" | "fine-tuning" | "finetuning" => Phase::TrainingStep,
        _ => return None,
    };
    let mut verb = index.checked_sub(1)?;
    if matches!(words[verb].text, "the" | "a" | "an" | "my" | "its" | "our") {
        verb = verb.checked_sub(1)?;
    }
    if !matches!(
        words[verb].text,
        "started" | "starts" | "began" | "begins" | "begun"
    ) {
        return None;
    }
    if lower[words[verb].end..words[index].start].contains([',', '.', ';', ':', '!', '?']) {
        return None;
    }
    if words.get(index + 1).is_some_and(|next| {
        matches!(
            next.text,
            "server" | "service" | "api" | "endpoint" | "engine" | "container" | "pod" | "script"
        )
    }) {
        return None;
    }
    reports_a_failure(lower, words[index].end).then_some((verb, phase))
}

/// A training named, then how far it went without a count, in its clause: `the training was cut
/// off halfway through`, `training crashes midway`, `the training stops after some time`, `the
/// fine-tuning dies after a while` (AUDIT.md, session 15, rule 2c; session 18). `index` is the
/// last word of the progress (`halfway`, `time`, `while`); the index of the training's noun.
fn training_went_on(lower: &str, words: &[Word<'_>], index: usize) -> Option<usize> {
    let text = |i: usize| words.get(i).map(|w| w.text);
    let progress_from = match words[index].text {
        "halfway" | "midway" | "partway" => index,
        "time"
            if text(index.wrapping_sub(1)) == Some("some")
                && text(index.wrapping_sub(2)) == Some("after") =>
        {
            index - 2
        }
        "sometime" if text(index.wrapping_sub(1)) == Some("after") => index - 1,
        "while"
            if text(index.wrapping_sub(1)) == Some("a")
                && text(index.wrapping_sub(2)) == Some("after") =>
        {
            index - 2
        }
        _ => return None,
    };
    // The training's noun within the five words before, in the same clause.
    let first = progress_from.saturating_sub(5);
    let training = (first..progress_from)
        .rev()
        .find(|&i| training_noun(words[i].text))?;
    let between = &lower[words[training].end..words[progress_from].start];
    if between.contains([',', '.', ';', ':', '!', '?']) {
        return None;
    }
    // Not a setting (`training steps after a while`), nor the training's start or end named
    // (`before training`, `after training`).
    if training > 0 && matches!(words[training - 1].text, "before" | "after") {
        return None;
    }
    sentence_reports_a_failure(lower, words[training].start, words[index].end).then_some(training)
}

/// `… steps of sampling`, `… step 3 of the eval`: the steps of a generation or an evaluation.
fn of_another_stage(words: &[Word<'_>], last: usize) -> bool {
    let text = |i: usize| words.get(i).map(|w| w.text);
    let mut next = last + 1;
    if text(next) != Some("of") {
        return false;
    }
    next += 1;
    if text(next) == Some("the") {
        next += 1;
    }
    text(next).is_some_and(|w| {
        matches!(
            w,
            "sampling"
                | "sampler"
                | "generation"
                | "inference"
                | "denoising"
                | "decoding"
                | "eval"
                | "evaluation"
                | "validation"
                | "test"
        )
    })
}

#[cfg(test)]
mod tests;
