//! The reporter's words that other programs held the GPU's memory: `solved, other programs
//! occupy memory`, `start a second process which tries to load another large model`, `the GPU
//! is used by another process`, `there is already a training on GPU 0`. A general reading
//! convention, not an engine's wording: an OOM message prints what this process holds and
//! (PyTorch ≥ 2.1, `reportProcessMemoryInfo`) the other PIDs, but a paste often lacks both, and
//! the reporter's sentence is then what decides "another process" against "the job needs more".
//!
//! Not advice or a guess (`check whether another process uses the GPU`, `maybe another program
//! holds it`), a negation (`no other process is running`) or a question.

/// The words that name another holder (lower case), each as a phrase of its own.
const HOLDERS: [&str; 9] = [
    "another process",
    "other process",
    "other processes",
    "other program",
    "other programs",
    "another program",
    "second process",
    "other application",
    "another application",
];

/// Words after a holder that say it holds or uses the memory (or the GPU).
const HOLDING: [&str; 14] = [
    "occup",
    "using",
    "uses",
    "used",
    "hold",
    "held",
    "taking",
    "takes",
    "consum",
    "eat",
    "load",
    "running on",
    "running in",
    "allocat",
];

/// Words just before a holder that make the sentence advice, a guess or a negation.
const DENY: [&str; 26] = [
    "no", "not", "any", "without", "none", "nothing", "if", "whether", "check", "make", "ensure",
    "try", "avoid", "close", "kill", "stop", "maybe", "perhaps", "might", "could", "possibly",
    "probably", "reduce", "decrease", "free", "release",
];

/// Whether the line says other programs held the GPU's memory (see the module's text).
pub(crate) fn other_holders_said(text: &str) -> bool {
    if text.len() > 1000 {
        return false;
    }
    // `e.g.` and `i.e.` end no sentence.
    let lower = text
        .to_lowercase()
        .replace("e.g.", "eg")
        .replace("i.e.", "ie");
    if lower.trim_end().ends_with('?') {
        return false;
    }
    // `there is already a training in GPU 0` (the GPU taken by a job before this one).
    if regex!(r"already (?:a|another|one) (?:training|process|job|program|model)(?: running)? (?:is )?(?:in|on) (?:the )?(?:gpu|card|device)")
        .find(&lower)
        .is_some_and(|found| !denied(&lower[..found.start()]))
    {
        return true;
    }
    // A process left behind by an earlier run (`a zombie process was holding the memory`,
    // `killed the leftover python processes and it works`), or the card's memory reset by an
    // administrator before it worked again (`reset the GPU memory of the node`, Korean `GPU
    // 메모리를 초기화하였습니다`): memory held outside the job that failed.
    if let Some(found) = regex!(r"(?:zombie|leftover|left-over|stale|orphan(?:ed)?|dangling|defunct) (?:python |worker |training |gpu )?process(?:es)?|reset (?:the )?(?:gpu|card)(?:'s)? memory|(?:gpu|card)(?:'s)? memory (?:was |has been )?reset|(?i:gpu)[^.]{0,24}메모리를 초기화")
        .find(&lower)
    {
        if !denied(&lower[..found.start()]) {
            return true;
        }
    }
    HOLDERS.iter().any(|holder| {
        lower.match_indices(holder).any(|(at, _)| {
            let end = at + holder.len();
            let whole = lower[..at]
                .chars()
                .next_back()
                .is_none_or(|c| !c.is_alphanumeric())
                && lower[end..]
                    .chars()
                    .next()
                    .is_none_or(|c| !c.is_alphanumeric() || holder.ends_with("process"));
            // The rest of its sentence (up to a full stop) says it holds or uses something.
            // A full stop ends it before a space or at the end.
            let rest = &lower[end..];
            let sentence = regex!(r"[.;!](?:\s|$)")
                .find(rest)
                .map_or(rest, |stop| &rest[..stop.start()]);
            // … or the words before it do: `the card is used by another process`.
            let clause = lower[..at]
                .rsplit(['.', ';', '!', ','])
                .next()
                .unwrap_or("");
            let holding = HOLDING.iter().any(|word| sentence.contains(word))
                || (clause.trim_end().ends_with(" by")
                    && HOLDING.iter().any(|word| clause.contains(word)));
            whole && holding && !denied(&lower[..at])
        })
    })
}

/// Whether the line says the GPU itself has too little memory for the job, in a reporter's or
/// a maintainer's words (`Your 750 Ti doesnt have enough memory`, `your GPU doesn't have enough
/// VRAM`, `Buy GPU with more memory or use smaller models`, `the card's VRAM is too small`): the
/// reading "the job needs more than the card" when no figure of the message decides it. Not a
/// question, a guess or advice conditioned on it (`if your GPU doesn't have enough VRAM, …`), and
/// not the host's memory (`RAM`, `system memory`).
pub(crate) fn capacity_said(text: &str) -> bool {
    if text.len() > 1000 {
        return false;
    }
    if forge_model_exceeds_free(text) {
        return true;
    }
    let lower = text.to_lowercase().replace(['’', '`'], "'");
    if lower.trim_end().ends_with('?') {
        return false;
    }
    // A GPU as the subject: the device, its memory, a card by name or number (`750 ti`).
    let lacks = regex!(concat!(
        r"(?:^|[^a-z0-9_])",
        r"(?:gpus?|cards?|graphics card|video card|vram|\d{3,4} ?ti|rtx ?\d{4}|gtx ?\d{3,4}|[ahlptv]\d{1,3}|mi\d{3}x?)",
        r"(?: \w+)? (?:does ?n'?t|does not|do ?n'?t|do not) have enough (?:gpu |video |graphics )?(?:memory|vram)",
        r"|(?:gpu|card|vram)(?:'s)? (?:memory |vram )?is (?:too small|not enough|insufficient)",
        r"|(?:buy|get|use|need|needs) (?:a |an )?(?:gpu|card|graphics card|video card) with more (?:memory|vram)",
        // A bigger card as the way out (`no solution … than getting a bigger gpu`, `you need a
        // larger GPU`).
        r"|(?:buy|buying|get|getting|use|using|need|needs) (?:a |an )?(?:bigger|larger) (?:gpu|card|graphics card|video card)",
        // The card's size said to be too little (`4Gb is a little too low`, `8 GB of VRAM is
        // not enough`, `12gb vram is too small`).
        r"|\b\d+(?:\.\d+)? ?(?:gb|gib|g)(?: of)?(?: (?:gpu memory|vram|video memory|gpu ram))? (?:is|are) (?:(?:a little|a bit|just|simply|way|far|much|definitely|probably) )?(?:too (?:low|small|little)|not enough|insufficient)"
    ));
    // The failure comes with larger inputs only (`with a bigger batch size it fails`, `longer
    // sentences give this error`, 单句稍微长一点，或者batch大一点，就会报这个错误): the job's own
    // activations outgrow the card. `if`/`when` is how such a sentence is said, so only a guess
    // denies it.
    let larger = regex!(concat!(
        r"(?:with|using|at|use) (?:a |the )?(?:bigger|larger|higher) batch",
        r"|(?:increas|rais)(?:e|es|ed|ing) (?:the )?batch",
        // More of what the job renders or runs at once (`increasing the number of envs and
        // camera width/height`, `raising the resolution`).
        r"|(?:increas|rais)(?:e|es|ed|ing) (?:the )?(?:number of (?:envs|environments|cameras|images|frames|samples|sequences|tokens|parallel)|resolution|image size|camera (?:width|height|resolution))",
        r"|(?:longer|larger|bigger) (?:input|sentence|sequence|image|prompt|context)s?\b",
        r"|batch\S{0,6}(?:大一点|大一些|调大|增大|加大)",
        r"|(?:句子?|序列|输入)\S{0,4}(?:长一点|长一些|更长)"
    ));
    if let Some(found) = larger.find(&lower) {
        let clause = lower[..found.start()]
            .rsplit([',', '.', ';', '!', '('])
            .next()
            .unwrap_or("");
        if !clause
            .split_whitespace()
            .any(|word| matches!(word, "maybe" | "perhaps" | "whether" | "unless" | "try"))
        {
            return true;
        }
    }
    lacks.find(&lower).is_some_and(|found| {
        let before = &lower[..found.start()];
        let clause = before
            .rsplit([',', '.', ';', '!', '('])
            .next()
            .unwrap_or(before);
        !clause
            .split_whitespace()
            .any(|word| matches!(word, "if" | "whether" | "maybe" | "perhaps" | "unless"))
    })
}

/// Forge's own estimate before it moves a model to the GPU (`backend/memory_management.py`
/// `load_models_gpu`: `[Memory Management] Target: …, Free GPU: {free} MB, Model Require:
/// {model} MB, Previously Loaded: …, Inference Require: …, Remaining: {free - model -
/// inference} MB`) with the model alone larger than what is free: the app says the job needs
/// more than the card has, and only swaps part of it in.
fn forge_model_exceeds_free(text: &str) -> bool {
    let Some(found) =
        regex!(r"Free GPU: (\d+(?:\.\d+)?) MB, Model Require: (\d+(?:\.\d+)?) MB").captures(text)
    else {
        return false;
    };
    let number = |index: usize| {
        found
            .get(index)
            .and_then(|value| value.as_str().parse::<f64>().ok())
    };
    matches!((number(1), number(2)), (Some(free), Some(model)) if model > free)
}

/// Whether the last words before a phrase deny it (advice, a guess, a negation).
fn denied(before: &str) -> bool {
    // Only the clause the phrase is in.
    let clause = before
        .rsplit([',', '.', ';', '!', '('])
        .next()
        .unwrap_or(before);
    clause
        .split_whitespace()
        .rev()
        .take(5)
        .map(|word| word.trim_matches(|c: char| !c.is_alphanumeric()))
        .any(|word| DENY.contains(&word) || word.ends_with("n't"))
}

#[cfg(test)]
mod forge_tests {
    use super::capacity_said;

    /// Forge's estimate with the model larger than the free memory says the card is too small;
    /// with room for it, it says nothing.
    #[test]
    fn forge_model_larger_than_free_is_capacity_said() {
        assert!(capacity_said(
            "[Memory Management] Target: KModel, Free GPU: 2000.50 MB, Model Require: 6400.00 \
             MB, Previously Loaded: 0.00 MB, Inference Require: 1024.00 MB, Remaining: -5424.50 \
             MB, "
        ));
        assert!(!capacity_said(
            "[Memory Management] Target: JointTextEncoder, Free GPU: 9000.00 MB, Model Require: \
             5000.00 MB, Previously Loaded: 0.00 MB, Inference Require: 1024.00 MB, Remaining: \
             2976.00 MB, "
        ));
    }
}

#[cfg(test)]
mod tests {
    use super::other_holders_said;

    #[test]
    fn holders_named_by_the_reporter() {
        for line in [
            "solved, other programs occupy memory.",
            "Then start a second process (e.g. by a second user) which tries to load a model.",
            "The card is used by another process of a colleague",
            "the memory was occupied by other programs",
            "it tells GPU 0 is out of memory (because there is already a training on GPU 0)",
            "Another process is holding 20 GB on the card",
            "There was a zombie python process holding 10 GB.",
            "I killed the leftover processes and now it works",
            "The admin reset the GPU memory of that node; training runs again.",
        ] {
            assert!(other_holders_said(line), "{line}");
        }
    }

    #[test]
    fn a_card_too_small_for_the_job_in_words() {
        use super::capacity_said;
        for line in [
            "Your 1050 Ti doesnt have enough memory.",
            "It comes from that your GPU doesn't have enough VRAM.",
            "Buy a GPU with more memory or use smaller models.",
            "the card's VRAM is too small for this model",
            "It works with batch size 1, but with a bigger batch it fails.",
            "when I increase the batch size to 8 this error appears",
            "句子稍微长一点，或者batch大一点，就会报这个错误。",
        ] {
            assert!(capacity_said(line), "{line}");
        }
        for line in [
            "If your GPU doesn't have enough VRAM, use --lowvram.",
            "Does my GPU not have enough memory?",
            "My PC doesn't have enough memory to load it",
            "maybe the card is too small",
            "Try a smaller batch size.",
            "How can I use longer prompts?",
        ] {
            assert!(!capacity_said(line), "{line}");
        }
    }

    #[test]
    fn advice_guesses_negations_and_questions_are_not() {
        for line in [
            "Please check whether another process uses the GPU.",
            "Maybe another program holds the memory",
            "There is no other process using the GPU.",
            "I made sure that no other program is running on it",
            "Is another process using the GPU?",
            "Waiting for other processes to finish the barrier",
            "Close other programs that use VRAM before launching.",
            "Decrease GPU memory utilization or reduce GPU memory used by other processes.",
            "nothing else: I don't have any other process holding memory",
            "Check for zombie processes with nvidia-smi.",
            "Maybe a stale process holds it",
        ] {
            assert!(!other_holders_said(line), "{line}");
        }
    }
}
