//! Look-alikes of a GPU OOM in words.
//!
//! A failure's wording inside a conditional clause of advice: `If you get CUDA out of memory,
//! set PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True`, `When you see torch.cuda.
//! OutOfMemoryError, lower the batch size`, `To avoid OOM, use --medvram`. A README, a FAQ or
//! a maintainer's reply says what to do should it happen; it reports nothing. The general
//! reading convention: a sentence that opens with a condition (`if`, `when`, `whenever`, `in
//! case`, `should you`) and has no first person before the wording (`If I raise the batch to
//! 16 I get CUDA out of memory` reports), addressed to the reader (`you`) or followed by an
//! instruction; or a purpose clause (`to avoid`, `to prevent`) in front of it.
//!
//! A failure's wording in a forecast ([`in_forecast`]): `CUDA out of memory errors are likely
//! with batch_size=256`, `this may cause OOM`, `at risk of running out of memory`.
//!
//! And a title's OOM whose paste ends in an error of another kind ([`unrelated_error`]).

/// Whether the failure's wording read from `from` in `text` stands in such a clause. A
/// mention's start is its line's first word (the whole sentence is the mention), so the clause
/// is judged at the wording itself: the first `out of memory`, `OOM`, `OutOfMemoryError`,
/// `cudaErrorMemoryAllocation`, `not enough …`, `insufficient …` at or after `from`.
pub(super) fn in_advice_clause(text: &str, from: usize) -> bool {
    let Some(tail) = text.get(from..) else {
        return false;
    };
    let at = from
        + regex!(r"(?i)out[ -]of[ -](?:memory|vram)|\boom|outofmem|memoryallocation|_alloc_failed|not enough|insufficient|resource_?exhausted")
            .find(tail)
            .map_or(0, |found| found.start());
    let Some(head) = text.get(..at) else {
        return false;
    };
    // The sentence holding the wording: after the last `. `, `! `, `? ` or `;` before it.
    let sentence_start = regex!(r"[.!?;](?:\s|$)")
        .find_iter(head)
        .last()
        .map_or(0, |found| found.end());
    let prefix = head[sentence_start..].to_lowercase();
    let prefix = prefix
        .trim_start_matches(|c: char| c.is_whitespace() || matches!(c, '>' | '-' | '*' | '#'))
        .trim_start();
    // A label in front of the sentence (`Tip:`, `Note:`, `NB:`).
    let prefix = regex!(r"^(?:tip|tips|note|hint|nb|ps|faq|troubleshooting)\s*:\s*")
        .find(prefix)
        .map_or(prefix, |label| &prefix[label.end()..]);
    if regex!(r"^(?:to avoid|to prevent|in order to avoid|in order to prevent)\b").is_match(prefix)
    {
        return true;
    }
    if !regex!(r"^(?:if|when|whenever|in case|should you|in the event)\b").is_match(prefix) {
        return false;
    }
    let words: Vec<&str> = prefix
        .split(|c: char| !(c.is_alphanumeric() || c == '\''))
        .filter(|word| !word.is_empty())
        .collect();
    const FIRST_PERSON: [&str; 11] = [
        "i", "i'm", "i've", "im", "me", "my", "we", "we're", "we've", "our", "us",
    ];
    if words.iter().any(|word| FIRST_PERSON.contains(word)) {
        return false;
    }
    let reader = words
        .iter()
        .any(|word| matches!(*word, "you" | "your" | "you're"));
    let rest = text[at..].to_lowercase();
    // The instruction after the clause: `, set …`, `, try …`, `then lower …`.
    let instruction = regex!(r"(?:,|:|\bthen)\s*(?:please\s+|just\s+)?(?:set|try|use|reduce|lower|decrease|enable|disable|add|pass|restart|increase|switch|see|check|install|upgrade|downgrade|export|call|close|free|consider|make|you can|you should|you may|you might|you need|you'll need|refer)\b")
        .is_match(&rest);
    reader || instruction
}

/// Whether the failure's wording read from `from` in `text` is forecast, not reported: the
/// sentence around it says it may come (`… CUDA out of memory errors are likely with
/// batch_size=256`, `OOM may occur`, `this might cause out of memory`, `at risk of running out
/// of memory`). A warning before a run (a script's own free-memory check, an engine's `… which
/// may cause OOM`) predicts; a failure message states what happened and never hedges. The
/// wording is found as in [`in_advice_clause`].
pub(super) fn in_forecast(text: &str, from: usize) -> bool {
    let Some(tail) = text.get(from..) else {
        return false;
    };
    let Some(found) =
        regex!(r"(?i)out[ -]of[ -](?:memory|vram)|\boom\b|outofmem|memoryallocation").find(tail)
    else {
        return false;
    };
    let (at, end) = (from + found.start(), from + found.end());
    let (Some(head), Some(rest)) = (text.get(..at), text.get(end..)) else {
        return false;
    };
    // The sentence around the wording: from the last `. `/`; `/line break before it to the
    // next one after it.
    let sentence_start = regex!(r"[.!?;](?:\s|$)|\n")
        .find_iter(head)
        .last()
        .map_or(0, |found| found.end());
    let before = head[sentence_start..].to_lowercase();
    let sentence_end = regex!(r"[.!?;](?:\s|$)|\n")
        .find(rest)
        .map_or(rest.len(), |found| found.start());
    let after = rest[..sentence_end].to_lowercase();
    let cause_ahead = regex!(r"\b(?:may|might|could|can|would|will)\s+(?:likely\s+)?(?:cause|lead\s+to|result\s+in|trigger)\s+(?:an?\s+|the\s+)?(?:\w+\s+){0,2}$|\brisk\s+of\s+(?:an?\s+|running\s+|going\s+)?(?:\w+\s+){0,2}$")
        .is_match(&before);
    let hedged_after = regex!(r"^\W*(?:\w+\W+){0,3}?(?:(?:are|is)\s+(?:likely|possible|expected|probable)|(?:may|might|could|can|will\s+likely)\s+(?:occur|happen|arise|result|follow))\b")
        .is_match(&after);
    cause_ahead || hedged_after
}

/// A traceback's last line raising an exception of a class that is never a memory failure
/// (Python's built-in `ValueError`, `KeyError`, `TypeError`, …, and `json`'s and HTTP
/// clients' errors), its words naming no memory: the paste shows the error that ended the run,
/// and it is not an out-of-memory. A title's or a sentence's `CUDA out of memory` before it
/// names what the reporter took the failure for (or a failure the paste does not show), so the
/// mention gives way to it. A memory word in the line keeps the mention (`ValueError: …
/// make sure you have enough GPU RAM`), as does a wrapper class that re-raises another
/// process's failure (`RuntimeError`, `ChildFailedError`, `RayTaskError`, not in the list).
pub(super) fn unrelated_error(text: &str) -> bool {
    let found = regex!(r"^\s*(?:[A-Za-z_][\w.]*\.)?(?:ValueError|KeyError|TypeError|AttributeError|IndexError|ImportError|ModuleNotFoundError|NameError|FileNotFoundError|NotImplementedError|AssertionError|SyntaxError|IndentationError|UnicodeDecodeError|UnicodeEncodeError|ZeroDivisionError|JSONDecodeError|PermissionError|ConnectionRefusedError|ConnectionError|TimeoutError|HTTPError|RecursionError)(?::\s|:?\s*$)")
        .is_match(text);
    found && !regex!(r"(?i)memory|vram|\boom|alloc|resource|cuda|gpu|显存|内存").is_match(text)
}

/// Whether a failure read after `prefix` (the text before it on its line) is named in the
/// reporter's own sentence, outside any code span: at least three words of prose before it (no
/// logger's level or source location), the last a verb of meeting it (`…according to the readme
/// file, but got CUDA error: out of memory.`). The program's own message, if pasted, follows.
pub(super) fn told_in_prose(prefix: &str) -> bool {
    if regex!(r"\b(?:INFO|WARNING|WARN|ERROR|DEBUG)\b|\.py:\d+\]|[\[\]|:]\s*$").is_match(prefix) {
        return false;
    }
    let words: Vec<&str> = prefix
        .split_whitespace()
        .map(|word| word.trim_matches(|c: char| matches!(c, ',' | ';' | '—' | '"' | '\'')))
        .filter(|word| {
            !word.is_empty()
                && word.chars().all(|c| c.is_alphabetic() || c == '\'')
                && word.chars().any(char::is_lowercase)
        })
        .collect();
    let last = prefix.split_whitespace().next_back().unwrap_or("");
    words.len() >= 3
        && matches!(
            last.to_ascii_lowercase().as_str(),
            "got"
                | "get"
                | "gets"
                | "getting"
                | "encountered"
                | "encounter"
                | "encountering"
                | "hit"
                | "hitting"
                | "meet"
                | "met"
                | "throws"
                | "threw"
                | "raised"
                | "gives"
                | "gave"
        )
}

/// Whether an engine's log line read after `prefix` (the text before it on its line) is quoted
/// in the reporter's own sentence: inside an inline code span (an odd number of backticks
/// before it) that prose opens, at least three words of it, and no logger's level or source
/// location on the line (`INFO 05-01 …`, `[gpu_worker.py:227]`), as in `… lowering it far
/// enough to load then yields `Available KV cache memory: -2.26 GiB``. The engine logged the
/// line; the reporter tells of it, as they tell of an OOM in words.
pub(super) fn told_in_sentence(prefix: &str) -> bool {
    if prefix.matches('`').count() % 2 == 0 {
        return false;
    }
    let Some(tick) = prefix.rfind('`') else {
        return false;
    };
    if regex!(r"\b(?:INFO|WARNING|WARN|ERROR|DEBUG)\b|\.py:\d+\]").is_match(prefix) {
        return false;
    }
    let words = prefix[..tick]
        .split_whitespace()
        .filter(|word| {
            let word = word.trim_matches(|c: char| matches!(c, ',' | ';' | ':' | '—' | '-'));
            !word.is_empty()
                && word.chars().all(|c| c.is_alphabetic() || c == '\'')
                && word.chars().any(char::is_lowercase)
        })
        .count();
    words >= 3
}
