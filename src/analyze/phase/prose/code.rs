//! Code the reporter quotes or names in their prose: a statement or a function named in
//! backticks or bare (`trainer.train()`, `model.generate`), and a commented statement, read
//! for the stage its name tells.

use super::*;

/// Code the reporter names as where the failure came (`triggers an immediate CUDA OOM … at the
/// FastLanguageModel.from_pretrained()`, `the program error location is … engine.py (if not
/// self.dont_change_device: self.module.to(self.device))`, `# OOM in
/// `set_module_tensor_to_device``), in a line whose paragraph names the failure: a call read
/// as the caller's statement is (`user_code::statement_phase`: a `from_pretrained`, a model's
/// `.to(device)`), or a function's name in backticks that the frame rules map to one stage
/// (accelerate's `set_module_tensor_to_device`, `rules/hf.rs`). Only in a person's sentence
/// (three words or more outside the code): a traceback's source line is the frames' to read.
/// (start, end, phase).
pub(super) fn named_code(text: &str) -> Vec<(usize, usize, Phase)> {
    let mut out = Vec::new();
    let is_ident = |c: char| c.is_ascii_alphanumeric() || c == '_' || c == '.';
    // Calls: a dotted name and its balanced parentheses.
    let bytes = text.as_bytes();
    let mut spans: Vec<(usize, usize)> = Vec::new();
    for (open, _) in text.match_indices('(') {
        let start = text[..open]
            .char_indices()
            .rev()
            .take_while(|&(_, c)| is_ident(c))
            .last()
            .map_or(open, |(index, _)| index);
        let name = &text[start..open];
        if !name.contains('.') && !name.contains('_') {
            continue;
        }
        let mut depth = 0usize;
        let close = text[open..].char_indices().find_map(|(index, c)| {
            match c {
                '(' => depth += 1,
                ')' => {
                    depth -= 1;
                    if depth == 0 {
                        return Some(open + index + 1);
                    }
                }
                _ => {}
            }
            None
        });
        if let Some(close) = close {
            // Outermost calls only (`a.to(b.device())` is one).
            let inside = spans.last().is_some_and(|&(_, end)| start < end);
            if start < open && bytes[start].is_ascii_alphabetic() && !inside {
                spans.push((start, close));
            }
        }
    }
    let outside_words = {
        let mut rest = text.to_string();
        for &(start, end) in spans.iter().rev() {
            rest.replace_range(start..end, " ");
        }
        rest.split_whitespace()
            .filter(|word| word.len() > 1 && word.chars().all(char::is_alphabetic))
            .count()
    };
    if outside_words < 3 {
        return out;
    }
    for (start, end) in spans {
        if let Some((phase, _)) = super::super::user_code::statement_phase(&text[start..end]) {
            out.push((start, end, phase));
        }
    }
    out.extend(ticked_functions(text));
    out.extend(bare_functions(text));
    out
}

/// Whether a lowercase paragraph points out where the failure came, without naming it: the
/// traceback or stack trace read (`the traceback points to …`), or `where it happened` /
/// `where it failed` / `where it crashed` (session 34).
pub(super) fn points_to_the_failure(lower: &str) -> bool {
    [
        "traceback",
        "stack trace",
        "stacktrace",
        "where it happened",
        "where it failed",
        "where it fails",
        "where it crashed",
        "where it crashes",
    ]
    .iter()
    .any(|words| lower.contains(words))
}

/// The shortest function name [`bare_functions`] reads: shorter ones (`load_model`) are words
/// the phrases read, or too common to name a frame.
const BARE_FUNCTION_CHARS: usize = 11;

/// Functions' names written without backticks (a title's `… fails during
/// determine_available_memory on …`) that the frame rules map to one stage, as
/// [`ticked_functions`] reads them; only long names with an underscore, not part of a path, an
/// option (`--max_num_batched_tokens`), an assignment or a dotted name.
fn bare_functions(text: &str) -> Vec<(usize, usize, Phase)> {
    let mut out = Vec::new();
    let ident = |c: char| c.is_ascii_alphanumeric() || c == '_';
    let mut at = 0;
    while at < text.len() {
        let Some(start) = text[at..].find(|c: char| ident(c)).map(|i| at + i) else {
            break;
        };
        let end = text[start..]
            .find(|c: char| !ident(c))
            .map_or(text.len(), |i| start + i);
        at = end;
        let name = &text[start..end];
        let before = text[..start].chars().next_back();
        let after = text[end..].chars().next();
        // A private method's one leading underscore is part of its name
        // (`_get_per_token_logps_and_entropies`); a special name's two are not read.
        let bare = name.strip_prefix('_').unwrap_or(name);
        if name.len() < BARE_FUNCTION_CHARS
            || !bare.contains('_')
            || bare.starts_with('_')
            || !bare.starts_with(|c: char| c.is_ascii_lowercase())
            || matches!(before, Some('`' | '-' | '/' | '\\' | '.' | '=' | '$' | '{'))
            || matches!(after, Some('`' | '/' | '\\' | '=' | '}'))
            || (after == Some('.')
                && text[end + 1..]
                    .chars()
                    .next()
                    .is_some_and(|c| c.is_alphanumeric() || c == '_'))
        {
            continue;
        }
        if let Some(phase) = named_function_stage(name) {
            out.push((start, end, phase));
        }
    }
    out
}

/// The stage the frame rules give a function named in words, when every rule of that name that
/// shows a stage (not an offload hook or a wrapper) gives the same one.
fn named_function_stage(name: &str) -> Option<Phase> {
    let mut phases = super::super::FRAME_RULES
        .iter()
        .filter(|rule| rule.function == name && rule.role != super::super::Role::Offload)
        .filter(|rule| rule.role != super::super::Role::Wrapper)
        .map(|rule| rule.phase);
    let first = phases.next()?;
    (phases.all(|phase| phase == first) && first != Phase::Unknown).then_some(first)
}

/// Functions' names in backticks (`` `determine_num_available_blocks` ``, `` `capture_model()` ``)
/// that the frame rules map to one stage: where each lies, and the stage.
pub(super) fn ticked_functions(text: &str) -> Vec<(usize, usize, Phase)> {
    let mut out = Vec::new();
    let mut ticks = text.match_indices('`').map(|(at, _)| at);
    while let (Some(open), Some(close)) = (ticks.next(), ticks.next()) {
        // A call written with its parentheses (`capture_model()`) names the same function, and
        // so does a method named with its class or module (`EngineCore.run_busy_loop`).
        let name = text[open + 1..close].trim_end_matches("()");
        // A method named with its receiver (`ppo_trainer.step`, `model.generate`): the call it
        // names, read as the caller's statement is (session 47).
        let dotted = name.contains('.')
            && name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '.');
        if dotted {
            if let Some((phase, _)) = super::super::user_code::statement_phase(&format!("{name}()"))
            {
                out.push((open, close + 1, phase));
                continue;
            }
        }
        let name = match name.rsplit_once('.') {
            Some((owner, method))
                if !owner.is_empty()
                    && owner
                        .chars()
                        .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '.') =>
            {
                method
            }
            _ => name,
        };
        if name.len() < 10
            || !name.contains('_')
            || name.starts_with('_') && name.ends_with('_')
            || !name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
        {
            continue;
        }
        if let Some(phase) = named_function_stage(name) {
            out.push((open, close + 1, phase));
        }
    }
    out
}

/// A statement of the reporter's code whose comment names the failure (`test_res =
/// trainer.test()  # => OOM error`, `out = model.generate(**x)  # OOM here`): the stage that
/// statement runs (`user_code::statement_phase`), read on a marked line or its neighbours.
pub(super) fn commented_statement(lines: &[ProseLine]) -> Option<(Phase, String)> {
    for prose in lines {
        let around = [
            (prose.line.saturating_sub(1), prose.before.as_deref()),
            (prose.line, Some(prose.text.as_str())),
            (prose.line + 1, prose.after.as_deref()),
        ];
        for (line, text) in around {
            let Some((code, comment)) = text.and_then(|text| text.split_once('#')) else {
                continue;
            };
            let comment = comment.to_lowercase();
            if code.trim().is_empty() || !OOM_WORDS.iter().any(|word| comment.contains(word)) {
                continue;
            }
            let Some((phase, what)) = super::super::user_code::statement_phase(code) else {
                continue;
            };
            let code = code.trim();
            return Some((
                phase,
                format!(
                    "line {line}: the reporter's code `{code}` is marked as where the failure \
                     came (its comment names it), {what}: {}",
                    phase.as_str()
                ),
            ));
        }
    }
    None
}
