//! The reporter's words on a raw `CUDA error: out of memory` at the process's first CUDA work:
//! the line of code they name as where it failed moves the model to the GPU (`It happened at this
//! line net = net.to(device)`, `在初始化模型 net.cuda() 时报错`), or they say no CUDA tensor can be
//! made at all (`I am unable to create a simple cuda variable`). With the CUDA runtime's own error
//! (not PyTorch's "Tried to allocate", which a failed tensor allocation prints) that is the CUDA
//! context failing to be created: start-up, as a traceback's `Module.to` frame is read
//! (`phase::context_creation`, docs/phases.md "Creating the CUDA context").

use super::{is_log_output, ProseLine};
use crate::model::explain::Phase;

/// Words that tie the named code to the failure on its line or the line above.
const POINTERS: &[&str] = &[
    "error",
    "报错",
    "错误",
    "this line",
    "at line",
    "happened at",
    "happens at",
    "fails",
    "failed",
    "crash",
    "out of memory",
    "oom",
];

/// The stage and why, when a line of the reporter's names the first CUDA work as where the raw
/// CUDA error came (`raw_cuda_error`: the failure is the runtime's `CUDA error: out of memory`).
pub(super) fn first_cuda_work(
    lines: &[ProseLine],
    raw_cuda_error: bool,
) -> Option<(Phase, String)> {
    if !raw_cuda_error {
        return None;
    }
    for prose in lines {
        let text = prose.text.as_str();
        if text.trim_start().starts_with('>') || is_log_output(text) {
            continue;
        }
        // A traceback's source line under its frame is the traceback's, read by the frame rules.
        if prose
            .before
            .as_deref()
            .is_some_and(|before| before.contains("File \"") || before.contains(", in "))
        {
            continue;
        }
        let lower = text.to_lowercase();
        let above = prose.before.as_deref().unwrap_or("").to_lowercase();
        let pointed = POINTERS
            .iter()
            .any(|word| lower.contains(word) || above.contains(word));
        if let Some(code) = model_move(text).filter(|_| pointed) {
            return Some((
                Phase::Startup,
                format!(
                    "line {}: the reporter names `{code}`, the model's first move to the GPU, as \
                     where the CUDA runtime's own out-of-memory error came (not PyTorch's \"Tried \
                     to allocate\"): creating the CUDA context failed",
                    prose.line
                ),
            ));
        }
        if no_cuda_tensor(&lower) {
            return Some((
                Phase::Startup,
                format!(
                    "line {}: the reporter cannot make even a small CUDA tensor, and the error is \
                     the CUDA runtime's own out-of-memory error: creating the CUDA context failed",
                    prose.line
                ),
            ));
        }
    }
    None
}

/// A move of a model or module to the GPU written in the line: `x.cuda()`, `x.to(device)`,
/// `x.to("cuda")`, `x.to('cuda:0')` (not `x.to(torch.float16)`, a conversion).
fn model_move(text: &str) -> Option<&str> {
    static MOVE: std::sync::LazyLock<regex::Regex> = std::sync::LazyLock::new(|| {
        crate::parse::oom_text::compile(
            r"[A-Za-z_][A-Za-z0-9_.]*\.(?:cuda\(\s*\d*\s*\)|to\(\s*(?:self\.)?(?:device|[\x22']cuda[^\x22']*[\x22']|[\x22']gpu[\x22'])\s*\))",
        )
    });
    MOVE.find(text).map(|found| found.as_str())
}

/// `unable to create a simple cuda variable`, `can't create any CUDA tensor`.
fn no_cuda_tensor(lower: &str) -> bool {
    let denied = [
        "unable to",
        "cannot",
        "can't",
        "can not",
        "not able to",
        "fails to",
    ];
    ["cuda variable", "cuda tensor"].iter().any(|thing| {
        lower.match_indices(thing).any(|(at, _)| {
            let before = &lower[..at];
            let create = before.rfind("create").or_else(|| before.rfind("make"));
            create.is_some_and(|create| {
                at - create < 24
                    && denied
                        .iter()
                        .any(|deny| before[..create].ends_with(&format!("{deny} ")))
            })
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lines(text: &str) -> Vec<ProseLine> {
        let all: Vec<&str> = text.lines().collect();
        all.iter()
            .enumerate()
            .map(|(index, line)| ProseLine {
                line: index as u64 + 1,
                text: line.to_string(),
                before: index
                    .checked_sub(1)
                    .map(|above| all[above].to_string())
                    .filter(|above| !above.trim().is_empty()),
                after: all.get(index + 1).map(|below| below.to_string()),
            })
            .collect()
    }

    #[test]
    fn a_named_move_of_the_model_is_the_first_cuda_work() {
        for text in [
            "It happened at this line\n net = net.to(device).",
            "启动时 second node 在初始化模型 net.cuda() 时报错 RuntimeError: CUDA error: out of memory",
            "The error comes from model.to(\"cuda:0\") in my script",
            "I am unable to create a simple cuda variable.",
        ] {
            let found = first_cuda_work(&lines(text), true);
            assert_eq!(found.map(|(phase, _)| phase), Some(Phase::Startup), "{text}");
        }
    }

    #[test]
    fn other_words_and_other_errors_are_not() {
        for text in [
            // Not named as where it failed.
            "I moved it with net.to(device) and trained for an hour",
            // A conversion, not a move.
            "It failed at this line: model = model.to(torch.float16)",
            // A traceback's source line.
            "  File \"train.py\", line 3, in <module>\n    net = net.to(device)  # error here",
            "I can create a simple cuda variable fine",
        ] {
            assert_eq!(first_cuda_work(&lines(text), true), None, "{text}");
        }
        // PyTorch's own allocator message: a tensor's allocation failed, not the context.
        assert_eq!(
            first_cuda_work(
                &lines("It happened at this line\n net = net.to(device)."),
                false
            ),
            None
        );
    }
}
