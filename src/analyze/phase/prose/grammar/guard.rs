//! Guards: what keeps a sentence that does not report this failure's stage out of the
//! grammar (advice, a hypothetical, a question without the failure in it, a negation, a stage
//! that went well, a general case).

use super::*;

/// Whether the sentence around a hit (words `from..=to`) makes it advice, a hypothetical, a
/// negation or a question without the failure, or says the stage went well.
pub(super) fn guarded(lower: &str, words: &[Word<'_>], from: usize, to: usize) -> bool {
    let start = words[from].start;
    let end = words[to].end;
    let sentence_start = lower[..start]
        .rfind(['.', '!', '?', ';', '\n'])
        .map_or(0, |at| at + 1);
    let sentence_end = lower[end..]
        .find(['.', '!', '?', ';', '\n'])
        .map_or(lower.len(), |at| end + at);
    // A `but` before the hit turns to another clause: the words before it guard that clause's
    // verb, not the hit (`my GPU doesn't have enough memory, but when I query it more than 4
    // times it runs out`).
    let clause_start = words
        .iter()
        .filter(|w| w.start >= sentence_start && w.end <= start)
        .filter(|w| matches!(w.text, "but" | "however"))
        .map(|w| w.end)
        .next_back()
        .unwrap_or(sentence_start);
    let guard = words
        .iter()
        .enumerate()
        .filter(|(_, w)| w.start >= clause_start && w.end <= start)
        .any(|(at, w)| {
            GUARD.contains(&w.text)
                && (w.text != "if"
                    || !reported_condition(lower, words, sentence_start, end, sentence_end))
                && !addressed_to_the_author(words, at)
        });
    if guard {
        return true;
    }
    if behaviour_told(lower, start) {
        return true;
    }
    let oom = super::super::OOM_WORDS
        .iter()
        .any(|word| lower[sentence_start..sentence_end].contains(word));
    // A request for help closing the sentence after a comma (`When I encountered the following
    // error while performing the training, can someone help me?`) asks nothing of the stage.
    // `Anyone with this error while running training?`: others asked about the reporter's own
    // failure (`this error`, `the same error`), not whether it fails.
    let sentence = &lower[sentence_start..sentence_end];
    let opening = sentence.trim_start();
    let asks_others = ["anyone", "has anyone", "does anyone", "did anyone"]
        .iter()
        .any(|words| opening.starts_with(words))
        && [
            "this error",
            "the same error",
            "this issue",
            "this problem",
            "the above issue",
            "the above error",
        ]
        .iter()
        .any(|words| sentence.contains(words));
    let asks_help = asks_others
        || lower[end..sentence_end].rfind(',').is_some_and(|comma| {
            let tail = &lower[end + comma..sentence_end];
            [
                "help", "someone", "anyone", "any idea", "solve", "fix", "solution",
            ]
            .iter()
            .any(|word| tail.contains(word))
        });
    let question = lower[sentence_end..].starts_with('?') && !asks_help;
    if question && !oom {
        return true;
    }
    // The rest of the sentence, up to a `but` (which turns to the failure), says the stage
    // went well (`when I finetune it on four A100s with the same config, there isn't any
    // problem`).
    let rest = &lower[end..sentence_end];
    let rest = [" but ", " however", " although", " though"]
        .iter()
        .filter_map(|word| rest.find(word))
        .min()
        .map_or(rest, |at| &rest[..at]);
    // Words after the failure is reported are of another case (`Inpainting gives Out of memory
    // (1080 TI), without Inpainting no problems`).
    let rest = super::super::OOM_WORDS
        .iter()
        .filter_map(|word| rest.find(word))
        .min()
        .map_or(rest, |at| &rest[..at]);
    rest.split(|c: char| !(c.is_alphanumeric() || c == '\''))
        .any(|word| WENT_WELL.contains(&word))
        || WENT_WELL_PHRASES.iter().any(|phrase| rest.contains(phrase))
}

/// Whether the guard word at `at` addresses the project's author, not the reader with advice
/// (session 48): a courtesy (`I'm sorry to bother you, I have met this problem when I ran to 35
/// epoches`, `thank you`) or the author's own work the reporter used (`I am using your code to
/// train PointLK`, `when I run your script`).
fn addressed_to_the_author(words: &[Word<'_>], at: usize) -> bool {
    let before = at.checked_sub(1).map(|i| words[i].text);
    let after = words.get(at + 1).map(|w| w.text);
    match words[at].text {
        "you" => matches!(before, Some("bother" | "disturb" | "trouble" | "thank")),
        "your" => matches!(
            after,
            Some(
                "code"
                    | "codes"
                    | "script"
                    | "scripts"
                    | "repo"
                    | "repository"
                    | "project"
                    | "implementation"
                    | "program"
                    | "demo"
                    | "notebook"
                    | "work"
            )
        ),
        _ => false,
    }
}

/// Whether the sentence's `if` states the reporter's own condition with its outcome, a report
/// rather than a hypothetical: `if I` / `if we` opens the sentence, and after the hit (`end`)
/// the sentence names the failure with no modal, future or negation (`If I try to use a batch
/// size like 16 it starts training and after 10 iterations it throws a Cuda oom error`, against
/// `if you train with a smaller batch it fits`, `if I train on two cards, would it still run
/// out of memory?`, `if we load it in 8 bits it won't run out of memory`).
fn reported_condition(
    lower: &str,
    words: &[Word<'_>],
    sentence_start: usize,
    end: usize,
    sentence_end: usize,
) -> bool {
    let mut in_sentence = words.iter().filter(|w| w.start >= sentence_start);
    let opens_with_own_if = in_sentence.next().is_some_and(|w| w.text == "if")
        && in_sentence
            .next()
            .is_some_and(|w| matches!(w.text, "i" | "we"));
    let after = &lower[end..sentence_end];
    let names_failure = super::super::OOM_WORDS
        .iter()
        .any(|word| after.contains(word));
    let open = words
        .iter()
        .filter(|w| w.start >= sentence_start && w.end <= sentence_end)
        .any(|w| {
            matches!(
                w.text,
                "would"
                    | "will"
                    | "could"
                    | "might"
                    | "should"
                    | "may"
                    | "won't"
                    | "wouldn't"
                    | "not"
                    | "no"
                    | "never"
                    | "don't"
                    | "doesn't"
                    | "you"
                    | "your"
            )
        });
    opens_with_own_if && names_failure && !open && !lower[sentence_end..].starts_with('?')
}

/// Words before a hit in its sentence that make it a general case, not this failure (`One
/// common case is running the evaluation`, `usually when processing images`, `for example when
/// testing`): read for the verbs and phrases of a model applied to inputs.
const GENERAL_CASE: &[&str] = &[
    "common case",
    "one case",
    "usually",
    "typically",
    "generally",
    "in general",
    "for example",
    "for instance",
    "e.g.",
    // A reply's aside on the writer's own other runs (`if it is too big, this error can happen
    // (personally I always have this problem when I try to train the m2m100 model)`).
    "personally",
    "in my experience",
];

/// Whether the sentence around `start..end` makes a hit advice, a hypothetical, a negation, a
/// question without the failure, a stage that went well ([`guarded`]) or a general case
/// ([`GENERAL_CASE`]).
pub(in crate::analyze::phase::prose) fn sentence_guarded(
    lower: &str,
    start: usize,
    end: usize,
) -> bool {
    let words = words(lower);
    let (Some(from), Some(to)) = (
        words.iter().position(|w| w.end > start),
        words.iter().rposition(|w| w.start < end),
    ) else {
        return false;
    };
    from > to
        || guarded(lower, &words, from, to)
        || general_case(lower, start)
        || asks_whether(lower, &words, from, to)
}

/// Whether the hit stands in a yes/no question (`Does it OOM with high concurrency?`, `Will a
/// 24 GB card fit long inputs?`): whether it fails is asked, not reported.
fn asks_whether(lower: &str, words: &[Word<'_>], from: usize, to: usize) -> bool {
    let start = words[from].start;
    let end = words[to].end;
    let sentence_start = lower[..start]
        .rfind(['.', '!', '?', ';', '\n'])
        .map_or(0, |at| at + 1);
    let question = lower[end..]
        .find(['.', '!', '?', ';', '\n'])
        .is_some_and(|at| lower[end + at..].starts_with('?'));
    let first = words
        .iter()
        .find(|w| w.start >= sentence_start)
        .map(|w| w.text);
    question
        && first.is_some_and(|w| {
            matches!(
                w,
                "does" | "do" | "will" | "would" | "can" | "could" | "is" | "are" | "should"
            )
        })
}

/// A program's behaviour told, not a report (`the inference engine will attempt to load the
/// model in int8 mode`): `will` with a verb of trying right before the hit at `start`, or
/// before the hit's own verb of trying.
pub(in crate::analyze::phase::prose) fn behaviour_told(lower: &str, start: usize) -> bool {
    let before = &lower[..start];
    let rest = &lower[start..];
    [
        "will attempt to ",
        "will try to ",
        "will attempt ",
        "will try ",
    ]
    .iter()
    .any(|told| before.ends_with(told))
        || (before.ends_with("will ") && (rest.starts_with("attempt") || rest.starts_with("try")))
}

/// Whether a [`GENERAL_CASE`] word stands before `start` in its sentence.
pub(in crate::analyze::phase::prose) fn general_case(lower: &str, start: usize) -> bool {
    let sentence_start = lower[..start]
        .rfind(['.', '!', '?', ';', '\n'])
        .map_or(0, |at| at + 1);
    GENERAL_CASE
        .iter()
        .any(|word| lower[sentence_start..start].contains(word))
}

/// Phrases after a hit, in its sentence, that say the stage went well.
const WENT_WELL_PHRASES: &[&str] = &[
    "no problem",
    "any problem",
    "no issue",
    "any issue",
    "no error",
    "any error",
    "no oom",
    "without problem",
    "without issue",
    "without error",
    "without oom",
];
