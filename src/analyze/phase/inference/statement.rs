//! The stage read from what the caller's own failing statement does, with what the frames around
//! it and the lines before it show, when nothing stronger names the stage (weighed with the
//! other readings of `phase::inference`: below every library frame, engine line, hint, progress
//! stage and the names of the caller's functions).
//!
//! Two readings (docs/phases.md, "The caller's statement, read with what surrounds it"):
//!
//! 1. **A forward run for its outputs → inference.** The caller's statement calls a model
//!    (`seg = model(vol).argmax(1)`, `out, w = mha(x, x, x)`, `scores = runner(batch)`): the
//!    frame under it is PyTorch's `Module.__call__` (`torch/nn/modules/module.py`
//!    `_wrapped_call_impl` / `_call_impl`), a compiled module's (`torch/_dynamo/eval_frame.py`
//!    `OptimizedModule`), a `GraphModule`'s (`torch/fx/graph_module.py`) or a scripted one's
//!    (`torch/jit/`), or the paste ends at the statement and the callee is named for a model.
//!    A bare call decides nothing (a training step runs the same forward); one more sign that
//!    the outputs are what the run wants is needed:
//!    - the statement reads a prediction off the output: `argmax`/`argmin`/`topk`/`softmax`/
//!      `sigmoid`, prints it (`print(model(ids).shape)`), moves it off the GPU (`.cpu()`,
//!      `.numpy()`, `.tolist()`), or reads the
//!      last position's logits, `.logits[:, -1]`, which is how a decode step picks the next
//!      token (transformers `generation/utils.py` `GenerationMixin._sample`: `next_token_logits
//!      = outputs.logits[:, -1, :]`);
//!    - gradients are off around it: a `@torch.no_grad()` / `@torch.inference_mode()` wrapper
//!      frame (`torch/utils/_contextlib.py` `decorate_context`; `autograd/grad_mode.py` before
//!      2.0), or a `with torch.no_grad():` / `with torch.inference_mode():` line shown before
//!      the failure;
//!    - lines before the failure print one result per input (`batch 1024: output (1024,
//!      4096)`, `seq 512: out (4, 512, 1024)`, `doc 3: 12 tags`): an item and its number, then
//!      a shape or a count of things, no loss and no memory figure.
//!
//!    - the output is named for a prediction or a representation (`scores = model(x)`,
//!      `all_logits = net(batch)`, `hidden = encoder(ids).last_hidden_state`, a field such as
//!      `.last_hidden_state` / `.logits` / `.image_embeds` read off it: transformers
//!      `modeling_outputs.py`), and no caller frame is named for training or a start-up pass
//!      (`train.py`, `train_step`, `warmup`, `profile_run`, `dummy`) and no compiled module
//!      runs its training graph (below): a variable is named for
//!      what the program keeps of it; a generic name (`y`, `yhat`, `out`, `outputs`) says
//!      nothing.
//!
//!    The statement that gathers a loop's outputs (`torch.cat(all_embeddings)`,
//!    `torch.stack(preds)`) reads the same with the last two signs.
//! 2. **A loss computed → training_step.** The statement assigns a loss (`loss =
//!    F.cross_entropy(model(x), y)`, `loss, logits = …`) or reads a model output's `.loss`
//!    (`model(**batch).loss`: transformers' models return the loss when given labels), or runs
//!    a model inside `with accelerator.accumulate(model):` (accelerate `Accelerator.accumulate`,
//!    the gradient-accumulation context of a training loop). Not when the run shows an
//!    evaluation: gradients off (as above), a perplexity or evaluation named in the statement,
//!    the caller's function or file names or the lines before the failure (`ppl`,
//!    `perplexity`, `eval`, `val_loss`).
//!
//! Any training shown around the failure (a training line, `backward`, an optimizer, an epoch)
//! cancels the first reading (`inference::training_shown`).

use super::super::user_code::{called_path, clip, is_library_file, last_name, module_like, words};
use super::{Frame, InferenceInputs};
use crate::model::explain::{ContextLine, Phase};

/// The caller's statement at the failure: the innermost frame of the caller's own code outside
/// a model's `forward` (a user module's forward is part of the call its caller made), with its
/// index in the frames; `None` when that frame prints no statement (a paste cut at the frame).
fn caller_statement(frames: &[Frame]) -> Option<(usize, &Frame, &str)> {
    let (at, frame) = frames
        .iter()
        .enumerate()
        .rev()
        .filter(|(at, frame)| {
            !frame.called && !is_library_file(&frame.file) && !library_arrow(frames, *at)
        })
        .find(|(_, frame)| !in_forward(&frame.function))?;
    let code = frame.code.as_deref()?.trim();
    (!code.is_empty()).then_some((at, frame, code))
}

/// Whether the frame at `at` is the arrow line IPython prints in a library frame's listing
/// (`File …/torch/nn/modules/dropout.py:73, in Dropout.forward(self, input)` then `---> 73
/// return F.dropout(…)`, read as a `<call>` frame): the library's statement, not the caller's.
fn library_arrow(frames: &[Frame], at: usize) -> bool {
    frames[at].file == "<call>"
        && at
            .checked_sub(1)
            .and_then(|before| frames.get(before))
            .is_some_and(|header| header.file != "<call>" && is_library_file(&header.file))
}

/// Whether a function is a module's forward (`forward`, `_forward`, `forward_features`,
/// `__call__`).
fn in_forward(function: &str) -> bool {
    function == "__call__"
        || function
            .split('_')
            .filter(|word| !word.is_empty())
            .any(|word| word == "forward")
}

/// Whether a library frame dispatches a call to a module (see the module's notes).
fn module_dispatch(frame: &Frame) -> bool {
    let file = frame.file.replace('\\', "/");
    (file.ends_with("torch/nn/modules/module.py")
        && matches!(
            frame.function.as_str(),
            "_wrapped_call_impl" | "_call_impl" | "__call__"
        ))
        || file.ends_with("torch/_dynamo/eval_frame.py")
        || file.ends_with("torch/fx/graph_module.py")
        || file.contains("torch/jit/")
}

/// Names of functions a prediction is read with (`torch.argmax(model(x), 1)`).
const READERS: &[&str] = &["argmax", "argmin", "topk", "softmax", "sigmoid"];

/// The model a statement calls at its top level, or inside a reader of its prediction or a
/// `print` (`torch.argmax(model(x), 1)`, `print(model(x).shape)` → `model`): its dotted name
/// and where its call opens.
fn called_model(code: &str) -> Option<(&str, usize)> {
    let path = called_path(code)?;
    let open = code.find(&format!("{path}("))? + path.len();
    if READERS.contains(&last_name(path)) || path == "print" {
        let inner = &code[open + 1..];
        let path = called_path(inner)?;
        let at = inner.find(&format!("{path}("))? + path.len();
        return Some((path, open + 1 + at));
    }
    Some((path, open))
}

/// Whether the callee names a loss or a constructor, not a model run on inputs.
fn not_a_model(path: &str) -> bool {
    let name = last_name(path);
    let lower = name.to_ascii_lowercase();
    name.starts_with(|c: char| c.is_ascii_uppercase())
        || lower.contains("loss")
        || lower.contains("criterion")
        || lower.contains("tokenizer")
        || lower.contains("processor")
}

/// The statement runs a model: the callee and how that shows.
fn runs_model<'a>(frames: &[Frame], at: usize, code: &'a str) -> Option<(&'a str, usize)> {
    let (path, open) = called_model(code)?;
    if not_a_model(path) {
        return None;
    }
    let below = frames[at + 1..].iter().find(|frame| !frame.called);
    let confirmed = match below {
        Some(frame) => module_dispatch(frame),
        // The paste ends at the statement (or only the call is named): the callee's name says.
        None => module_like(path),
    };
    confirmed.then_some((path, open))
}

/// What the statement reads off the model's output (after the call opening at `open`).
fn prediction_read(code: &str, open: usize) -> Option<&'static str> {
    let before = &code[..open];
    if READERS.iter().any(|reader| {
        before
            .trim_end_matches(|c: char| c.is_alphanumeric() || c == '_' || c == '.')
            .ends_with(&format!("{reader}("))
            || before.ends_with(&format!("{reader}("))
    }) {
        return Some("a prediction read off its output");
    }
    // The output printed (`print(model(ids).shape)`, `print("scores:", net(x))`): the run
    // shows what the model gave, as a script trying a model does.
    if before.trim_start().starts_with("print(") {
        return Some("its output printed (`print(…)`)");
    }
    let after = &code[open..];
    const METHODS: &[(&str, &str)] = &[
        (".argmax(", "a prediction read off its output (`argmax`)"),
        (".argmin(", "a prediction read off its output (`argmin`)"),
        (".topk(", "a prediction read off its output (`topk`)"),
        (".softmax(", "a prediction read off its output (`softmax`)"),
        (".sigmoid(", "a prediction read off its output (`sigmoid`)"),
        (".cpu(", "its output moved off the GPU (`.cpu()`)"),
        (".numpy(", "its output moved off the GPU (`.numpy()`)"),
        (".tolist(", "its output moved off the GPU (`.tolist()`)"),
    ];
    if let Some((_, what)) = METHODS.iter().find(|(method, _)| after.contains(method)) {
        return Some(what);
    }
    let compact: String = after.chars().filter(|c| !c.is_whitespace()).collect();
    compact
        .contains(".logits[:,-1")
        .then_some("the last position's logits (`.logits[:, -1]`), a decode step's next token")
}

/// Names of a model's outputs that say what the run wants from it: a prediction (`scores`,
/// `logits`, `probs`, `preds`, `masks`, `boxes`, `captions`) or a representation (`embeddings`,
/// `feats`, `hidden`), as the variable's last word (`all_scores`, `hidden_states`). Generic
/// names (`y`, `yhat`, `out`, `outputs`, `result`) say nothing: a training step's forward is
/// written the same way.
const PREDICTION_NAMES: &[&str] = &[
    "scores",
    "logits",
    "probs",
    "probabilities",
    "preds",
    "pred",
    "predictions",
    "prediction",
    "embeddings",
    "embedding",
    "embeds",
    "emb",
    "embs",
    "features",
    "feats",
    // Vectors of an encoder's outputs (`item_vecs = encoder(catalogue)`, `doc_vectors`).
    "vecs",
    "vectors",
    "hidden",
    "states",
    "captions",
    "detections",
    "dets",
    "masks",
    "boxes",
    "answers",
    "answer",
    "completions",
    // A vocoder's or a TTS model's output, the speech it synthesised (`wav = vocoder(mel)`).
    "wav",
    "wavs",
    "waveform",
    "waveforms",
    "audio",
];

/// Fields read off a model's output that are its prediction or representation (transformers'
/// `ModelOutput` classes, `modeling_outputs.py`: `last_hidden_state`, `pooler_output`,
/// `hidden_states`, `logits`; CLIP's `image_embeds` / `text_embeds`), not its `.loss`.
const OUTPUT_FIELDS: &[&str] = &[
    ".last_hidden_state",
    ".pooler_output",
    ".hidden_states",
    ".logits",
    ".image_embeds",
    ".text_embeds",
];

/// What a plain assignment statement assigns to (`preds, scores = …`: `preds, scores `), not a
/// comparison (`==`, `<=`), an augmented assignment (`+=`) or a keyword argument inside a call.
fn assignment_target(code: &str) -> Option<&str> {
    code.split_once('=')
        .filter(|(target, value)| {
            !target.contains('(')
                && !target.ends_with(['=', '!', '<', '>', '+', '-', '*', '/'])
                && !value.starts_with('=')
        })
        .map(|(target, _)| target)
}

/// The statement names the model's output for a prediction or reads one off it (see
/// [`PREDICTION_NAMES`], [`OUTPUT_FIELDS`]): what it names.
fn named_output(code: &str, open: usize) -> Option<String> {
    let target = assignment_target(code).map(str::trim);
    let named = target.and_then(|target| {
        target.split(',').map(str::trim).find(|name| {
            words(last_name(name))
                .last()
                .is_some_and(|word| PREDICTION_NAMES.contains(&word.as_str()))
        })
    });
    if let Some(name) = named {
        return Some(format!("its output is named for a prediction (`{name}`)"));
    }
    let after = &code[open..];
    OUTPUT_FIELDS
        .iter()
        .find(|field| {
            after.match_indices(*field).any(|(at, word)| {
                !after[at + word.len()..].starts_with(|c: char| c.is_alphanumeric() || c == '_')
            })
        })
        .map(|field| format!("it reads `{field}` off the output, a prediction, not a loss"))
}

/// A function mapped over a data set whose name says it runs a model for its outputs, the result
/// named for them (Hugging Face `datasets` `Dataset.map`, Ray Data `map_batches`, pandas
/// `apply`: `emotions_hidden = emotions_encoded.map(extract_hidden_states, batched=True)`):
/// the model applied to every example for its outputs, not trained (session 45).
fn maps_a_model_over_data(code: &str) -> Option<String> {
    let target = assignment_target(code)?.trim();
    let named = words(last_name(target))
        .last()
        .is_some_and(|word| PREDICTION_NAMES.contains(&word.as_str()));
    let (_, call) = ["map", "map_batches", "apply"]
        .iter()
        .find_map(|method| code.split_once(&format!(".{method}(")))?;
    let function = call
        .split([',', ')'])
        .next()
        .map(str::trim)
        .filter(|name| {
            name.chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '.')
        })?;
    const APPLY: &[&str] = &[
        "extract",
        "embed",
        "encode",
        "predict",
        "infer",
        "inference",
        "generate",
        "score",
        "transcribe",
        "caption",
        "classify",
    ];
    let applies = words(last_name(function))
        .iter()
        .any(|word| APPLY.contains(&word.as_str()) || PREDICTION_NAMES.contains(&word.as_str()));
    (named && applies).then(|| {
        format!(
            "maps `{function}` over a data set, a function named for a model's outputs, and \
             names the result for them (`{target}`) with no training shown"
        )
    })
}

/// Whether the caller's code is named for training (a file `train.py` / `finetune_lora.py`, a
/// function `train_step`) or for a start-up pass (`warmup`, `profile_run`, `dummy`,
/// `capture`): a forward there is the training's, or a warm-up's, however its output is named.
fn caller_named_otherwise(frames: &[Frame], code: &str) -> bool {
    frames
        .iter()
        .filter(|frame| !is_library_file(&frame.file))
        .any(|frame| {
            let base = frame.file.rsplit(['/', '\\']).next().unwrap_or_default();
            let stem = base.strip_suffix(".py").unwrap_or(base);
            super::trains(&stem.replace(['-', '.', '_'], " "))
                || super::trains(&frame.function.replace('_', " "))
                || super::super::name_phase(&frame.function) == Some(Phase::TrainingStep)
                || startup_named(&frame.function)
                || startup_named(stem)
        })
        || startup_named(code)
}

/// Whether a callee is an array library's function (`torch.log`, `F.interpolate`,
/// `np.concatenate`, `jnp.dot`), not a model: the module called inside its arguments may be a
/// transform whose output the function takes further.
fn array_function(path: &str) -> bool {
    let first = path.split('.').next().unwrap_or_default();
    path.contains('.')
        && matches!(
            first,
            "torch" | "F" | "nn" | "np" | "numpy" | "jnp" | "jax" | "tf" | "math" | "scipy"
        )
}

/// Words of a start-up pass (a warm-up, a profile, a capture, a dummy input) in a name or a
/// statement.
fn startup_named(text: &str) -> bool {
    words(text).iter().any(|word| {
        matches!(
            word.as_str(),
            "warmup" | "warm" | "profile" | "profiling" | "dummy" | "capture" | "graph"
        )
    })
}

/// The statement gathers a loop's outputs (`torch.cat(all_embeddings)`, `torch.stack(preds,
/// 0)`, `np.concatenate(outputs)`): the name gathered.
fn gathers_outputs(code: &str) -> Option<&str> {
    const GATHER: &[&str] = &["cat", "concat", "concatenate", "stack", "vstack", "hstack"];
    const OUTPUTS: &[&str] = &[
        "embedding",
        "embeddings",
        "emb",
        "embs",
        "output",
        "outputs",
        "outs",
        "pred",
        "preds",
        "prediction",
        "predictions",
        "logits",
        "features",
        "feats",
        "results",
        "scores",
        "probs",
    ];
    let path = called_path(code)?;
    if !GATHER.contains(&last_name(path)) {
        return None;
    }
    let open = code.find(&format!("{path}("))? + path.len() + 1;
    let argument = code[open..]
        .trim_start_matches(['(', '['])
        .split(|c: char| !(c.is_alphanumeric() || c == '_' || c == '.'))
        .next()
        .unwrap_or_default();
    words(argument)
        .iter()
        .any(|word| OUTPUTS.contains(&word.as_str()))
        .then_some(argument)
        .filter(|argument| !argument.is_empty())
}

/// Gradients are off around the statement: the no-grad decorator's wrapper frame above it, or
/// a `with torch.no_grad():` line before the failure. The line that shows it.
fn gradients_off(inputs: &InferenceInputs<'_>, at: usize) -> Option<String> {
    let decorated = inputs.frames[..at].iter().rev().find(|frame| {
        let file = frame.file.replace('\\', "/");
        frame.function == "decorate_context"
            && (file.contains("torch/utils/_contextlib.py")
                || file.contains("autograd/grad_mode.py"))
    });
    if let Some(frame) = decorated {
        return Some(format!(
            "line {}: a `@torch.no_grad()`/`@torch.inference_mode()` wrapper encloses it",
            frame.line
        ));
    }
    if let Some(frame) = compiled_inference_graph(&inputs.frames[at..]) {
        return Some(format!(
            "line {}: the compiled module runs AOTAutograd's inference graph (no \
             `autograd.Function` frame between its runtime wrapper and the compiled code: no \
             gradient was needed)",
            frame.line
        ));
    }
    inputs
        .lines
        .iter()
        .filter(|line| line.line < inputs.failure_line)
        .find(|line| no_grad_line(&line.text))
        .map(|line| {
            format!(
                "line {}: `{}` turns gradients off",
                line.line,
                clip(line.text.trim())
            )
        })
}

/// A compiled module run without gradients: AOTAutograd compiles an inference graph when no
/// input needs a gradient or grad mode is off (torch `torch/_functorch/aot_autograd.py`
/// `create_aot_dispatcher_function`: `needs_autograd = any(x.requires_grad …) and
/// torch.is_grad_enabled()`, else `aot_dispatch_base`), and wraps a training graph in an
/// `autograd.Function` (`CompiledFunction`, whose `apply` is a `torch/autograd/function.py`
/// frame) otherwise. Read only when the frames run from the runtime wrapper
/// (`_aot_autograd/runtime_wrappers.py` `runtime_wrapper`) down to the compiled code
/// (`inner_fn`, `torch/_inductor/output_code.py`), so that an `apply` frame would show. The
/// runtime wrapper's frame.
fn compiled_inference_graph(frames: &[Frame]) -> Option<&Frame> {
    compiled_graph(frames).and_then(|(frame, training)| (!training).then_some(frame))
}

/// The runtime wrapper's frame of a compiled module whose frames reach its compiled code (see
/// [`compiled_inference_graph`]), and whether it runs the training graph (an
/// `autograd.Function` frame between them: gradients were needed).
fn compiled_graph(frames: &[Frame]) -> Option<(&Frame, bool)> {
    let normal = |frame: &Frame| frame.file.replace('\\', "/");
    let start = frames.iter().position(|frame| {
        frame.function == "runtime_wrapper"
            && normal(frame).ends_with("_aot_autograd/runtime_wrappers.py")
    })?;
    let reached = frames[start..].iter().position(|frame| {
        let file = normal(frame);
        (frame.function == "inner_fn" && file.ends_with("_aot_autograd/runtime_wrappers.py"))
            || file.ends_with("torch/_inductor/output_code.py")
    })?;
    let autograd = frames[start..start + reached]
        .iter()
        .any(|frame| normal(frame).ends_with("torch/autograd/function.py"));
    Some((&frames[start], autograd))
}

/// A source line as written, without the margin a traceback prints before it: IPython's line
/// number and arrow (`      4 with torch.no_grad():`, `----> 5     pred = net(x)`), Rich's box
/// and number (`│   12 │ with torch.no_grad():`, `❱ 13 │ …`).
fn source_text(text: &str) -> &str {
    text.trim_start_matches(|c: char| {
        c.is_whitespace() || c.is_ascii_digit() || matches!(c, '-' | '>' | '│' | '❱' | '|')
    })
}

/// A line that turns gradients off: `with torch.no_grad():`, `with torch.inference_mode():`
/// (or the names imported bare), the decorators, `torch.set_grad_enabled(False)`.
fn no_grad_line(text: &str) -> bool {
    let compact: String = source_text(text)
        .chars()
        .filter(|c| !c.is_whitespace())
        .collect();
    let compact = compact
        .strip_prefix("with")
        .or_else(|| compact.strip_prefix('@'))
        .unwrap_or(&compact);
    let compact = compact.strip_prefix("torch.").unwrap_or(compact);
    ["no_grad(", "inference_mode(", "set_grad_enabled(False)"]
        .iter()
        .any(|call| compact.starts_with(call))
}

/// Item words of a progress line that count training steps, devices or loads, not inputs.
const NOT_INPUTS: &[&str] = &[
    "epoch",
    "step",
    "iter",
    "iteration",
    "gpu",
    "rank",
    "device",
    "cuda",
    "layer",
    "shard",
    "block",
    "worker",
    "process",
    "thread",
    "node",
    "part",
    "stage",
    "line",
    "error",
    "warning",
];

/// A line printing one result per input (see the module's notes): a head that names the input
/// by its number, `<item> <n>[/<m>]`, `<n> <unit>`, `<n><unit> (<n> <unit>)` (`doc 3`, `1024
/// tokens`, `224px (196 tokens)`), then `: ` and a shape, a count of things or a row of three
/// or more values (`[5.61, 5.63, 5.64]`).
fn result_line(text: &str) -> bool {
    let trimmed = after_bar(text).trim();
    let Some((head, rest)) = trimmed.split_once(": ") else {
        return false;
    };
    if !input_head(head) || super::trains(rest) {
        return false;
    }
    let lower = rest.to_ascii_lowercase();
    // A memory figure (`12.5 GiB`, `300MB`) or a load: a probe or a loader's line.
    let memory = ["memory", "alloc", "load"]
        .iter()
        .any(|word| lower.contains(word))
        || lower
            .split(|c: char| !(c.is_ascii_alphanumeric() || c == '.'))
            .map(|token| token.trim_start_matches(|c: char| c.is_ascii_digit() || c == '.'))
            .any(|unit| matches!(unit, "gib" | "mib" | "kib" | "gb" | "mb" | "kb" | "bytes"));
    if memory {
        return false;
    }
    let shape = lower.contains("torch.size(")
        || rest.match_indices(['(', '[']).any(|(at, _)| {
            let inner = rest[at + 1..].split([')', ']']).next().unwrap_or_default();
            let dims: Vec<&str> = inner.split(',').map(str::trim).collect();
            dims.len() >= 2
                && dims
                    .iter()
                    .all(|dim| !dim.is_empty() && dim.bytes().all(|b| b.is_ascii_digit()))
        });
    // A row of values, one per head, layer or class (`[5.61, 5.63, 5.64]`).
    let values = rest.match_indices('[').any(|(at, _)| {
        let inner = rest[at + 1..].split(']').next().unwrap_or_default();
        let items: Vec<&str> = inner.split(',').map(str::trim).collect();
        items.len() >= 3 && items.iter().all(|item| item.parse::<f64>().is_ok())
    });
    let mut tokens = rest.split_whitespace();
    let count = matches!(
        (tokens.next(), tokens.next()),
        (Some(n), Some(noun)) if n.bytes().all(|b| b.is_ascii_digit())
            && {
                let noun = noun.trim_end_matches([',', ';']);
                noun.len() > 2
                    && noun.ends_with('s')
                    && noun.bytes().all(|b| b.is_ascii_alphabetic())
            }
    );
    shape || values || count
}

/// What a line prints after the tqdm bars drawn before it on the same line (a bar redrawn with
/// `\r` and a `tqdm.write`/`print` after it: `images:  33%|███▎ | 1/3 [00:00<00:00]   image 0:
/// 12 instances`); the whole line when it holds no bar.
fn after_bar(text: &str) -> &str {
    let Some(bar) = text.rfind("%|") else {
        return text;
    };
    text[bar..]
        .find(']')
        .map_or(text, |end| &text[bar + end + 1..])
}

/// The head of a result line: at most four words, one a number (`3`, `#3`, `4/9`, `224px`),
/// the others words that name an input, not a training step, a device or a load
/// ([`NOT_INPUTS`]); a parenthesis may say the same in other units (`224px (196 tokens)`).
/// Not a log prefix: no clock time or date (`12:00:01`, `2024-05-01`), no level word.
fn input_head(head: &str) -> bool {
    let words: Vec<&str> = head
        .split_whitespace()
        .map(|word| word.trim_matches(['(', ')', ',']))
        .filter(|word| !word.is_empty())
        .collect();
    if words.is_empty() || words.len() > 4 || head.len() > 40 {
        return false;
    }
    let number = |word: &str| {
        let word = word.trim_start_matches('#');
        let digits = word.bytes().take_while(u8::is_ascii_digit).count();
        if digits == 0 {
            return false;
        }
        let tail = &word[digits..];
        let fraction = tail
            .strip_prefix('/')
            .is_some_and(|rest| !rest.is_empty() && rest.bytes().all(|b| b.is_ascii_digit()));
        // A unit glued to the number (`224px`, `16k`, `4x`), never a clock or a date.
        let unit = tail.len() <= 3 && tail.bytes().all(|b| b.is_ascii_alphabetic());
        fraction || unit
    };
    let name = |word: &str| {
        let lower = word.to_ascii_lowercase();
        word.len() >= 2
            && word.bytes().all(|b| b.is_ascii_alphabetic() || b == b'_')
            && !NOT_INPUTS.contains(&lower.as_str())
            && !NOT_INPUTS.contains(&lower.trim_end_matches('s'))
            && !matches!(
                lower.as_str(),
                "info" | "warn" | "warning" | "debug" | "error" | "critical" | "note"
            )
    };
    let numbers = words.iter().filter(|word| number(word)).count();
    numbers >= 1 && words.iter().all(|word| number(word) || name(word))
}

/// The last line before the failure that draws a tqdm bar short of its total (its last redraw
/// on the line: `images:  33%|███▎      | 1/3 [00:00<00:00, 13.49it/s]`): a loop still running.
fn running_bar<'a>(inputs: &'a InferenceInputs<'_>) -> Option<&'a ContextLine> {
    let short = |text: &str| {
        let Some(at) = text.rfind("%|") else {
            return false;
        };
        let rest = &text[at + 2..];
        let Some(end) = rest.find('|') else {
            return false;
        };
        let counts = rest[end + 1..]
            .split_whitespace()
            .next()
            .unwrap_or_default();
        counts.split_once('/').is_some_and(|(done, total)| {
            matches!((done.parse::<u64>(), total.parse::<u64>()), (Ok(done), Ok(total)) if done < total)
        })
    };
    inputs
        .lines
        .iter()
        .rev()
        .filter(|line| line.line < inputs.failure_line)
        .find(|line| short(&line.text))
        .copied()
}

/// The first line before the failure printing one result per input.
fn result_lines<'a>(inputs: &'a InferenceInputs<'_>) -> Option<&'a ContextLine> {
    inputs
        .lines
        .iter()
        .filter(|line| line.line < inputs.failure_line)
        .find(|line| result_line(&line.text))
        .copied()
}

/// Whether the failure is a fault a kernel raised on the device (a device-side assert, an
/// illegal or misaligned memory access, a launch failure): kernel launches return before the
/// kernel runs, so its fault is reported by a later CUDA call (the CUDA C++ Programming Guide,
/// "Error Checking"), and the statement the traceback shows need not be the one whose kernel
/// failed (PyTorch prints so under every CUDA error, c10 `c10/cuda/CUDAMiscFunctions.cpp`
/// `get_cuda_check_suffix`: "CUDA kernel errors might be asynchronously reported at some other
/// API call, so the stacktrace below might be incorrect"). A failed allocation is reported by
/// the call that asked for it.
fn asynchronous_error(inputs: &InferenceInputs<'_>) -> bool {
    inputs
        .lines
        .iter()
        .filter(|line| line.line >= inputs.failure_line && line.line <= inputs.failure_line + 6)
        .any(|line| {
            let lower = line.text.to_ascii_lowercase();
            [
                "device-side assert",
                "illegal memory access",
                "illegal address",
                "misaligned address",
                "unspecified launch failure",
            ]
            .iter()
            .any(|fault| lower.contains(fault))
        })
}

/// The caller's statement, when it is the one that failed (see [`asynchronous_error`]).
fn failing_statement<'a>(inputs: &InferenceInputs<'a>) -> Option<(usize, &'a Frame, &'a str)> {
    if asynchronous_error(inputs) {
        return None;
    }
    caller_statement(inputs.frames)
}

/// The statement of an interactive session (`>>> output = resnet(t)` above a traceback whose
/// caller frame is `<stdin>` and prints no statement): the session shows every statement run,
/// so with no training among them the model run is the program's whole work. The statement, the
/// `<stdin>` frame's index and the prompt line.
fn session_statement<'a>(inputs: &InferenceInputs<'a>) -> Option<(usize, &'a Frame, &'a str, u64)> {
    if asynchronous_error(inputs) {
        return None;
    }
    let (at, frame) = inputs
        .frames
        .iter()
        .enumerate()
        .rev()
        .find(|(_, frame)| !frame.called && !is_library_file(&frame.file))?;
    if frame.file != "<stdin>" || frame.code.is_some() {
        return None;
    }
    let prompt = inputs
        .lines
        .iter()
        .rev()
        .filter(|line| line.line < inputs.failure_line)
        .find(|line| line.text.trim_start().starts_with(">>> "))?;
    let code = prompt.text.trim_start().strip_prefix(">>> ")?.trim();
    (!code.is_empty()).then_some((at, frame, code, prompt.line))
}

/// Reading 1 in an interactive session (see [`session_statement`]).
fn session_forward(inputs: &InferenceInputs<'_>) -> Option<String> {
    let (at, _, code, line) = session_statement(inputs)?;
    let (path, _) = runs_model(inputs.frames, at, code)?;
    Some(format!(
        "line {line}: your interactive session runs the model `{path}` on inputs (`{}`); it shows \
         every statement run and none trains: inference",
        clip(code)
    ))
}

/// Reading 1: the caller's statement runs a model for its outputs (the caller already checked
/// that no training is shown).
pub(super) fn forward_for_outputs(inputs: &InferenceInputs<'_>) -> Option<String> {
    let Some((at, frame, code)) = failing_statement(inputs) else {
        return session_forward(inputs);
    };
    let results = || {
        result_lines(inputs).map(|line| {
            format!(
                "line {}: `{}` prints one result per input",
                line.line,
                clip(after_bar(&line.text).trim())
            )
        })
    };
    let what = if let Some((path, open)) = runs_model(inputs.frames, at, code) {
        let named = || {
            named_output(code, open).filter(|_| {
                !array_function(path)
                    && !caller_named_otherwise(inputs.frames, code)
                    && !compiled_graph(&inputs.frames[at..]).is_some_and(|(_, training)| training)
            })
        };
        let sign = prediction_read(code, open)
            .map(str::to_string)
            .or_else(|| gradients_off(inputs, at))
            .or_else(results)
            .or_else(named)?;
        format!("runs the model `{path}` on inputs with no training shown; {sign}")
    } else if let Some(mapped) = maps_a_model_over_data(code) {
        mapped
    } else if let Some(gathered) = gathers_outputs(code) {
        let sign = gradients_off(inputs, at).or_else(results)?;
        format!("gathers the outputs `{gathered}` with no training shown; {sign}")
    } else {
        // A loop over inputs whose progress bar was still running and that printed one result
        // per input, failing in its own code between two results (post-processing a
        // prediction, preparing the next input).
        let bar = running_bar(inputs)?;
        let sign = results()?;
        format!(
            "runs in a loop over inputs, whose bar was still running (line {}) and that printed \
             one result per input, with no training shown; {sign}",
            bar.line
        )
    };
    Some(format!(
        "line {}: your code ({}) `{}` {what}: inference",
        frame.line + 1,
        super::super::short_path(&frame.file),
        clip(code),
    ))
}

/// Words that name an evaluation of a model (a perplexity, a validation), not its training.
fn evaluation_words(text: &str) -> bool {
    words(text).iter().any(|word| {
        matches!(
            word.as_str(),
            "ppl"
                | "perplexity"
                | "eval"
                | "evaluate"
                | "evaluation"
                | "evaluating"
                | "val"
                | "valid"
                | "validate"
                | "validation"
                | "test"
                | "testing"
        )
    })
}

/// The loss the statement computes, if it computes one (see the module's notes).
fn loss_statement(code: &str) -> Option<&'static str> {
    let called = called_path(code)?;
    let target = assignment_target(code);
    let assigns = target.is_some_and(|target| {
        target.split(',').any(|name| {
            let name = last_name(name.trim());
            words(name).iter().any(|word| word == "loss")
        })
    });
    let reads_loss = code.match_indices(").loss").any(|(at, word)| {
        !code[at + word.len()..].starts_with(|c: char| c.is_alphanumeric() || c == '_')
    });
    if !called.is_empty() && assigns {
        Some("assigns a loss")
    } else if reads_loss {
        Some("reads the loss of a model's output (`.loss`)")
    } else {
        None
    }
}

/// A line before the failure that opens accelerate's gradient-accumulation context.
fn accumulates<'a>(inputs: &'a InferenceInputs<'_>) -> Option<&'a ContextLine> {
    line_before(inputs, |line| {
        let compact: String = source_text(&line.text)
            .chars()
            .filter(|c| !c.is_whitespace())
            .collect();
        compact.starts_with("with") && compact.contains(".accumulate(")
    })
}

/// The program's entry script (the outermost frame outside any library, `<module>` or `main`)
/// when its name starts with a word of training (`train_switch_moe.py`, `finetune.py`,
/// `pretrain_gpt.py`, `sft_lora.py`): a forward it runs is a training step's, unless an
/// evaluation is shown.
fn training_entry(frames: &[Frame]) -> Option<&Frame> {
    let entry = frames
        .iter()
        .find(|frame| !frame.called && !is_library_file(&frame.file))?;
    if !matches!(entry.function.as_str(), "<module>" | "main") {
        return None;
    }
    training_script(&entry.file).then_some(entry)
}

/// Whether a script's name starts with a word of training (`train_switch_moe.py`, `finetune.py`,
/// `pretrain_gpt.py`, `sft_lora.py`, `train.sh`).
fn training_script(file: &str) -> bool {
    let Some(stem) = super::script_stem(file) else {
        return false;
    };
    let first = stem
        .split(|c: char| !c.is_ascii_alphanumeric())
        .find(|word| !word.is_empty());
    first.is_some_and(|first| {
        matches!(
            first,
            "train" | "training" | "finetune" | "finetuning" | "pretrain" | "pretraining" | "sft"
        )
    })
}

/// Reading 2: the caller's statement computes a loss (or runs the model inside a gradient
/// accumulation), and nothing shows an evaluation.
pub(super) fn loss_for_training(inputs: &InferenceInputs<'_>) -> Option<String> {
    // An asynchronous error need not come from the statement shown, but in a program named for
    // training any statement of its that runs the model runs it for a training step.
    let (at, frame, code) = match failing_statement(inputs) {
        Some(statement) => statement,
        None if training_entry(inputs.frames).is_some() => caller_statement(inputs.frames)?,
        None => return None,
    };
    let what = match loss_statement(code) {
        Some(what) => what.to_string(),
        None => match accumulates(inputs) {
            Some(line) => {
                runs_model(inputs.frames, at, code)?;
                format!(
                    "runs the model inside `{}` (line {}), accelerate's gradient accumulation",
                    clip(line.text.trim()),
                    line.line
                )
            }
            None => {
                let (path, _) = runs_model(inputs.frames, at, code)?;
                if training_entry(inputs.frames).is_some() {
                    format!("runs the model `{path}` in a program named for training")
                } else {
                    let line = backward_listed(inputs)?;
                    format!(
                        "runs the model `{path}`, and the code listed with it calls `{}` (line \
                         {})",
                        clip(source_text(&line.text).trim()),
                        line.line
                    )
                }
            }
        },
    };
    if evaluation_shown(inputs, at, code).is_some() {
        return None;
    }
    Some(format!(
        "line {}: your code ({}) `{}` {what}, which a training step computes (no evaluation \
         shown): a training step",
        frame.line + 1,
        super::super::short_path(&frame.file),
        clip(code),
    ))
}

/// What shows an evaluation around the caller's statement at frame `at`: gradients off, a word
/// of evaluation in the statement, a caller's function or script named for it, or a perplexity
/// or an evaluation's loss logged before the failure.
fn evaluation_shown(inputs: &InferenceInputs<'_>, at: usize, code: &str) -> Option<String> {
    if let Some(why) = gradients_off(inputs, at) {
        return Some(why);
    }
    if evaluation_words(code) {
        return Some(format!(
            "the statement `{}` names an evaluation",
            clip(code)
        ));
    }
    if let Some(frame) = inputs.frames.iter().find(|frame| {
        !is_library_file(&frame.file)
            && (evaluation_words(&frame.function) || super::inference_script(&frame.file))
    }) {
        return Some(format!(
            "your function `{}` ({}) is named for an evaluation",
            frame.function,
            super::super::short_path(&frame.file)
        ));
    }
    line_before(inputs, |line| {
        words(&line.text)
            .iter()
            .any(|word| matches!(word.as_str(), "ppl" | "perplexity"))
            || line.text.to_ascii_lowercase().contains("val_loss")
            || line.text.to_ascii_lowercase().contains("eval_loss")
    })
    .map(|line| format!("line {} logs an evaluation's figure", line.line))
}

/// Reading 3: the caller's statement computes a loss while an evaluation is shown around it
/// (`loss = model(input_ids=ids, labels=ids).loss` in a `@torch.no_grad()` `perplexity`, a
/// split's `ppl` logged): the loss is the evaluation's figure, no step follows: inference.
pub(super) fn loss_for_evaluation(inputs: &InferenceInputs<'_>) -> Option<String> {
    let (at, frame, code) = failing_statement(inputs)?;
    let what = loss_statement(code)?;
    let evaluation = evaluation_shown(inputs, at, code)?;
    Some(format!(
        "line {}: your code ({}) `{}` {what}, and {evaluation}: the loss an evaluation \
         reports, no training step: inference",
        frame.line + 1,
        super::super::short_path(&frame.file),
        clip(code),
    ))
}

/// A line of code listed before the failure that calls `backward` or clears the gradients
/// before the next step (an IPython cell's lines around the one that raised, `3
/// out.loss.backward()`, `30 model.zero_grad()`; a script's source lines a rich traceback
/// shows): the statement that failed runs the model for a training step.
fn backward_listed<'a>(inputs: &'a InferenceInputs<'_>) -> Option<&'a ContextLine> {
    line_before(inputs, |line| {
        let code = source_text(&line.text);
        (code.contains(".backward(") || code.contains(".zero_grad("))
            && !code.trim_start().starts_with('#')
    })
}

/// The first line kept before the failure that `wanted` takes.
fn line_before<'a>(
    inputs: &'a InferenceInputs<'_>,
    wanted: impl Fn(&ContextLine) -> bool,
) -> Option<&'a ContextLine> {
    inputs
        .lines
        .iter()
        .filter(|line| line.line < inputs.failure_line)
        .find(|line| wanted(line))
        .copied()
}

#[cfg(test)]
mod tests;
