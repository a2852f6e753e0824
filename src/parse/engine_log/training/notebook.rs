//! Frames of IPython's and Jupyter's tracebacks: IPython 8's `File ~/x.py:12, in f()`, IPython
//! 7's `…/module.py in _call_impl(self, *input)`, Colab's linked paths, a notebook's own
//! functions (`<ipython-input-7-…> in load_model(hparams)`), and the arrow of a listing
//! (`----> 7 train(…)`), each kept for `analyze::phase` to read.

use super::{function_name, push_frame, LineFacts};

/// IPython 8: `File /path/x.py:123, in func(a, b)` or `File ~/x.py:12, in f()`.
pub(super) fn ipython_frame(text: &str, facts: &mut LineFacts) {
    let Some(at) = memchr::memmem::find(text.as_bytes(), b"File ") else {
        return;
    };
    let mut rest = &text[at + "File ".len()..];
    // JupyterLab renders the location as a markdown link: `File [~/x.py:49](http://…), in f()`.
    let linked = rest
        .strip_prefix('[')
        .and_then(|inner| inner.split_once("]("));
    let location = if let Some((location, tail)) = linked {
        rest = tail;
        location
    } else {
        let Some(comma) = rest.find(", in ") else {
            return;
        };
        &rest[..comma]
    };
    let Some(comma) = rest.find(", in ") else {
        return;
    };
    // `path:line`: the path is what comes before the last colon followed by digits only.
    let Some((file, line)) = location.rsplit_once(':') else {
        return;
    };
    if line.is_empty() || !line.bytes().all(|b| b.is_ascii_digit()) {
        return;
    }
    if let Some(function) = function_name(&rest[comma + ", in ".len()..]) {
        push_frame(facts, function, file);
    }
}

/// IPython 7: `~/lib/python3.8/site-packages/torch/nn/modules/module.py in _call_impl(self, *input)`
/// (also `C:\…\module.py in to(self, *args)`).
pub(super) fn ipython7_frame(text: &str, facts: &mut LineFacts) {
    let Some(at) = memchr::memmem::find(text.as_bytes(), b".py in ") else {
        return;
    };
    let head = &text[..at + ".py".len()];
    let file = head.rsplit([' ', '\t', '"']).next().unwrap_or(head);
    if !(file.starts_with('/') || file.starts_with('~') || file.get(1..3) == Some(":\\")) {
        return;
    }
    let rest = &text[at + ".py in ".len()..];
    let Some(function) = function_name(rest) else {
        return;
    };
    // The IPython 7 header is `path in func(args)`: the name is followed by its arguments.
    if rest[function.len()..].starts_with('(') {
        push_frame(facts, function, file);
    }
}

/// Colab's IPython 7 header, the path a markdown link: `[/usr/local/lib/python3.11/dist-packages/
/// unsloth/save.py](https://localhost:8080/#) in _merge_lora(layer, name)`.
pub(super) fn colab_frame(text: &str, facts: &mut LineFacts) {
    let Some(rest) = text.trim_start().strip_prefix('[') else {
        return;
    };
    let Some((file, tail)) = rest.split_once("](") else {
        return;
    };
    let Some((_, after)) = tail.split_once(") in ") else {
        return;
    };
    let script = file.ends_with(".py") && !file.contains(' ');
    let Some(function) = function_name(after).filter(|_| script) else {
        return;
    };
    if after[function.len()..].starts_with('(') {
        push_frame(facts, function, file);
    }
}

/// Jupyter/IPython's arrow on the line that made the call: `----> 1 out = model.generate(**x)`.
/// The called function counts as a frame (the cell's call is often all a pasted notebook
/// traceback keeps); its file is `<call>` so path-qualified rules never match it.
pub(in crate::parse::engine_log) fn jupyter_call(text: &str, facts: &mut LineFacts) {
    let Some(rest) = ipython_arrow(text) else {
        return;
    };
    let code = rest
        .trim_start_matches(|c: char| c.is_ascii_digit())
        .trim_start();
    if code.len() == rest.len() {
        return;
    }
    let Some(paren) = code.find('(') else {
        keras_fit_continuation(code, facts);
        return;
    };
    let callee = code[..paren]
        .rsplit(['.', ' ', '=', '(', '['])
        .next()
        .unwrap_or("");
    if let Some(function) = function_name(callee) {
        if function.len() == callee.len() {
            push_frame(facts, function, "<call>");
            facts.frame_code = Some(code.trim_end().to_string());
        }
    }
}

/// What follows IPython's arrow (`----> 7 train(…)`, `--> 122     model = …`): the line number
/// and the statement. IPython pads the arrow with dashes to the width of the listing's numbers
/// (`IPython/core/ultratb.py`: five columns in all), so dashes and digits together are at least
/// five; the dashes start the line or follow a space or a quote's `>`. (The rule's marker is
/// `--> `: a four-digit line's `-> 1518` goes unread, its marker too common a sequence for the
/// log scanner.)
fn ipython_arrow(text: &str) -> Option<&str> {
    let at = memchr::memmem::find(text.as_bytes(), b"-> ")?;
    let head = &text[..at + 1];
    let dashes = head.len() - head.trim_end_matches('-').len();
    let before = &head[..head.len() - dashes];
    let starts = before.is_empty() || before.ends_with([' ', '\t', '>', '|', '\u{2502}']);
    let rest = text[at + "-> ".len()..].trim_start();
    let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
    (starts && digits > 0 && dashes + digits >= 5).then_some(rest)
}

/// A notebook frame of a function the notebook defined: IPython 7 `<ipython-input-7-e3d9…> in
/// load_model(hparams)`, IPython 8.0–8.5 `Input In [7], in load_model(hparams)`, 8.6+ `Cell
/// In[7], line 122, in load_model(hparams)`. The cell's own code (`in <module>()`, `in <cell
/// line: 2>()`, a bare `Cell In[7], line 4`) is not a frame: its arrow line names the call.
pub(super) fn notebook_function_frame(text: &str, facts: &mut LineFacts) {
    let text = text.trim_start();
    let file_end = if text.starts_with("<ipython-input-") {
        text.find("> in ").map(|at| at + 1)
    } else if text.starts_with("Cell In[") || text.starts_with("Input In [") {
        text.find(']').map(|at| at + 1)
    } else {
        None
    };
    let Some(file_end) = file_end else {
        return;
    };
    let Some((_, rest)) = text[file_end..].split_once(" in ") else {
        return;
    };
    let Some(function) = function_name(rest) else {
        return;
    };
    if function.starts_with('<') || !rest[function.len()..].starts_with('(') {
        return;
    }
    push_frame(facts, function, &text[..file_end]);
}

/// The arrow on the last line of a call spread over several lines (`      3 model.fit(x=gen,` /
/// `----> 5     epochs=n_epochs)`): IPython points at the line where the call ends, which names
/// no function. Keyword arguments of Keras `Model.fit` (keras 2 `engine/training.py`, keras 3
/// `src/trainers/trainer.py`: `epochs`, `steps_per_epoch`, `validation_data`, `validation_split`,
/// `initial_epoch`, `validation_steps`, `validation_freq`; `evaluate` and `predict` take none of
/// them) closing the call show it was `fit`.
fn keras_fit_continuation(code: &str, facts: &mut LineFacts) {
    let closes = code.matches(')').count() > code.matches('(').count();
    let fit = [
        "epochs=",
        "steps_per_epoch=",
        "validation_data=",
        "validation_split=",
        "initial_epoch=",
        "validation_steps=",
        "validation_freq=",
    ]
    .iter()
    .any(|keyword| {
        code.match_indices(keyword).any(|(at, _)| {
            at == 0
                || !code.as_bytes()[at - 1].is_ascii_alphanumeric()
                    && code.as_bytes()[at - 1] != b'_'
        })
    });
    if closes && fit {
        push_frame(facts, "fit", "<call>");
    }
}
