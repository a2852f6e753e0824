//! What a verb of the reporter's words acts on: weights or data for `load`, an app or a job for
//! `launch`, a document or weights for `convert`, the device's memory or a model's inputs.

use super::Word;
use crate::model::explain::Phase;

/// What a loaded thing must not be for `load` to mean the weights: data, files, the GPU.
const NOT_WEIGHTS: &[&str] = &[
    "data",
    "dataset",
    "datasets",
    "image",
    "images",
    "file",
    "files",
    "video",
    "videos",
    "audio",
    "batch",
    "batches",
    "config",
    "tokenizer",
    "page",
    "gpu",
    "gpus",
    "gpu's",
    "memory",
    "vram",
    "it",
    "them",
    "and",
    "in",
    "on",
    "into",
    "onto",
    "from",
    "with",
    // `loading` as a noun, with nothing loaded named (`during the loading process`, `when the
    // loading is complete`): a dataset's loading as much as a model's.
    "process",
    "is",
    "was",
    "phase",
    "stage",
    "time",
    "bar",
    "screen",
];

/// Whether the verb at `index` acts on the device's memory, not on inputs to a model (`when
/// vLLM attempts to query available GPU memory`, `processing the free memory`): its object,
/// past an article and a few qualifiers, is memory or the device, or a size (an allocator's
/// `out of memory while requesting 68719476736 bytes`, MegEngine 1.x).
pub(super) fn memory_object(words: &[Word<'_>], index: usize) -> bool {
    let mut object = words.iter().skip(index + 1).take(4).filter(|word| {
        !matches!(
            word.text,
            "the" | "a" | "an" | "available" | "free" | "total" | "current" | "used"
        )
    });
    let Some(first) = object.next() else {
        return false;
    };
    let unit = |text: &str| {
        matches!(
            text,
            "bytes" | "byte" | "b" | "kb" | "mb" | "gb" | "tb" | "kib" | "mib" | "gib" | "tib"
        )
    };
    let size = {
        let digits = first.text.trim_start_matches(|c: char| c.is_ascii_digit());
        if digits.len() == first.text.len() {
            false
        } else if digits.is_empty() {
            // (`2.00 GiB` is read as the words `2`, `00`, `gib`.)
            let next = object.next();
            let decimals = next.is_some_and(|n| n.text.bytes().all(|b| b.is_ascii_digit()));
            let next = if decimals { object.next() } else { next };
            next.is_some_and(|next| unit(next.text))
        } else {
            unit(digits)
        }
    };
    size || matches!(
        first.text,
        "gpu" | "gpus" | "memory" | "vram" | "device" | "devices" | "cuda" | "nvml"
    )
}

/// `launch` followed by an app or a server, not a training run or a script (`launching the
/// training`, `launch train.py with torchrun`: the job named, not the moment it failed).
pub(super) fn launches_an_app(words: &[Word<'_>], index: usize) -> bool {
    !words.iter().skip(index + 1).take(3).any(|w| {
        w.text.contains("train")
            || w.text.contains("fine-tun")
            || w.text.contains("finetun")
            || matches!(
                w.text,
                "py" | "sh"
                    | "torchrun"
                    | "accelerate"
                    | "deepspeed"
                    | "job"
                    | "jobs"
                    // An experiment launched (`while launching a small-scale baseline`): the
                    // job, as a training launched is.
                    | "baseline"
                    | "baselines"
                    | "experiment"
                    | "experiments"
                    | "script"
                    | "it"
                    | "this"
                    // A GPU kernel launched (XLA's `Failed to launch CUDA kernel: fusion_29 …`,
                    // CUDA's `cuLaunchKernel`): a computation running, no app starting
                    // (session 36).
                    | "kernel"
                    | "kernels"
            )
    })
}

/// `load` followed by what it loads: the model, its weights or a model's name, not data. Not
/// another model than the one that failed (`I tried to load another model with no luck`, `each
/// test loading a different model`): the reporter's experiment to rule the model out, which says
/// nothing of the stage where this failure came (session 34).
pub(super) fn loads_weights(words: &[Word<'_>], index: usize) -> bool {
    let mut next = index + 1;
    while words.get(next).is_some_and(|w| {
        matches!(
            w.text,
            "the" | "a" | "an" | "my" | "this" | "that" | "our" | "these" | "those" | "up"
        )
    }) {
        next += 1;
    }
    // A data set's name before its noun (`when loading \`harmonix\` dataset`, `loading the
    // COCO dataset`): the noun a word or two later names what is loaded.
    let named_data = words.get(next + 1..).is_some_and(|rest| {
        rest.iter()
            .take(2)
            .take_while(|w| !matches!(w.text, "model" | "models" | "weights" | "checkpoint"))
            .any(|w| matches!(w.text, "dataset" | "datasets" | "data"))
    });
    !named_data
        && words.get(next).is_some_and(|object| {
            !NOT_WEIGHTS.contains(&object.text)
                && !matches!(object.text, "another" | "other" | "different" | "others")
        })
}

/// What a conversion phrase (`trying to convert`, from its first word in `from`) acts on when
/// it is not weights, as [`converts_a_document`] reads the verb's object: a user's document an
/// app runs its model on (`converting multiple pdf files`: inference), or a data set prepared
/// for a job (`trying to convert the raw data into ogb data format`: no stage, `Unknown`).
/// `None`: weights, or nothing of either kind named.
pub(in crate::analyze::phase::prose) fn converted_non_weights(from: &str) -> Option<Phase> {
    let words = super::words(from);
    let verb = words
        .iter()
        .position(|word| word.text.starts_with("conver"))?;
    if !converts_a_document(&words, verb) {
        return None;
    }
    let data = words
        .iter()
        .skip(verb + 1)
        .take(4)
        .any(|word| matches!(word.text, "data" | "dataset" | "datasets"));
    Some(if data {
        Phase::Unknown
    } else {
        Phase::Inference
    })
}

/// Whether `convert` at `index` acts on a document or a medium rather than on weights (`I try
/// to convert a small PDF file to markdown`, `converting the video`): an app's model at work on
/// the user's input (OCR, transcription), not a checkpoint's conversion. The first noun of
/// either kind within a few words decides.
pub(super) fn converts_a_document(words: &[Word<'_>], index: usize) -> bool {
    const WEIGHTS: &[&str] = &[
        "model",
        "models",
        "weights",
        "checkpoint",
        "checkpoints",
        "ckpt",
        "safetensors",
        "gguf",
        "onnx",
        "engine",
        "lora",
        "adapter",
    ];
    const DOCUMENTS: &[&str] = &[
        "pdf",
        "pdfs",
        "document",
        "documents",
        "doc",
        "docs",
        "docx",
        "file",
        "files",
        "image",
        "images",
        "photo",
        "photos",
        "video",
        "videos",
        "audio",
        "page",
        "pages",
        "text",
        "markdown",
        "epub",
        "html",
        "mp4",
        "mp3",
        "wav",
        // A data set changed to another format (`trying to convert the raw data into ogb data
        // format`): preparing data, not the weights.
        "data",
        "dataset",
        "datasets",
    ];
    words
        .iter()
        .skip(index + 1)
        .take(5)
        .find_map(|word| {
            if WEIGHTS.contains(&word.text) {
                Some(false)
            } else if DOCUMENTS.contains(&word.text) {
                Some(true)
            } else {
                None
            }
        })
        .unwrap_or(false)
}
