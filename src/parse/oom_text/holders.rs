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
        ] {
            assert!(other_holders_said(line), "{line}");
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
        ] {
            assert!(!other_holders_said(line), "{line}");
        }
    }
}
