//! The words next to a failure that name its stage: the app's words before the error on its
//! line or ending the line above, the task of the worker Ray killed (or the node's largest Ray
//! task), a JSON log event's name, an app's line naming the failure without its message.

use super::*;

/// The text after the last parenthesis left open in `before`, when one is.
fn unclosed_parenthesis(before: &str) -> Option<&str> {
    let mut open = Vec::new();
    for (at, c) in before.char_indices() {
        match c {
            '(' => open.push(at),
            ')' => {
                open.pop();
            }
            _ => {}
        }
    }
    open.last().map(|at| &before[at + 1..])
}

/// The text before an exception's repr that opens at its end (`… Unexpected
/// err=RuntimeError('`), if it does.
fn exception_repr_opened(before: &str) -> Option<&str> {
    let open = before.trim_end_matches(['\'', '"']).strip_suffix('(')?;
    let name_start = open
        .rfind(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == '.'))
        .map_or(0, |at| at + 1);
    let name = &open[name_start..];
    (name.ends_with("Error") || name.ends_with("Exception")).then(|| &before[..name_start])
}

/// Whether text is only a runtime's prefix of its error (`CUDA failed with error`, `CUDA
/// error`, `RuntimeError`), with no words of an app's own.
fn runtime_prefix(text: &str) -> bool {
    text.split_whitespace().all(|word| {
        matches!(
            word.to_ascii_lowercase().as_str(),
            "cuda"
                | "hip"
                | "failed"
                | "with"
                | "error"
                | "runtime"
                | "runtimeerror"
                | "cudnn"
                | "cublas"
        )
    })
}

/// What names the stage when Ray's memory monitor names the killed worker's task.
pub(super) const RAY_TASK: &str = "the task of the worker Ray killed";
/// The evidence of an app's node named at the failure (ComfyUI's `Error occurred when executing X:`).
pub(super) const APP_NODE: &str = "the app's node that raised it";
pub(super) const RAY_LARGEST_USER: &str =
    "the task of the node's largest user of memory when Ray killed a worker";

/// The command of the largest row of Ray's top memory users (`PID MEM(GB) COMMAND`, the
/// report's lines joined by spaces: a pid, its GB, its command, in a row), when it is a Ray
/// task's (`ray::…`) and no other command uses as much.
fn largest_ray_user(text: &str) -> Option<&str> {
    let words: Vec<&str> = text.split_whitespace().collect();
    let rows: Vec<(f64, &str)> = words
        .windows(3)
        .filter(|row| !row[0].is_empty() && row[0].bytes().all(|b| b.is_ascii_digit()))
        .filter_map(|row| Some((row[1].parse::<f64>().ok()?, row[2])))
        .collect();
    let most = rows.iter().map(|row| row.0).fold(f64::NAN, f64::max);
    let mut largest = rows.iter().filter(|row| row.0 == most).map(|row| row.1);
    let command = largest.next()?;
    (command.starts_with("ray::") && largest.all(|other| other == command)).then_some(command)
}

/// The words next to a failure that name its stage (weighed last, see `PhaseInputs::nearby`):
/// the app's own words before the error on its line (`Error during generation: CUDA out of
/// memory`), the message logged on the line above the failure's traceback (`logger.exception`
/// prints it there: `request 7f3a failed while running the model`), or, for a paste cut before
/// any frame, the statement printed just above the error (`return
/// Variable._execution_engine.run_backward(` under its carets).
pub(super) fn nearby_words<'a>(
    collected: &'a Collected,
    message: &OomMessage,
    frames: &'a [Frame],
) -> Option<(u64, Phase, &'static str, &'a str)> {
    let text_of = |line: u64| kept_text(collected, line);
    let head: String = message.text.chars().take(24).collect();
    // The app's words before the error on its own line, without the exception's class.
    if let Some(text) = text_of(message.line) {
        if let Some(at) = text.find(head.as_str()).filter(|at| *at > 0) {
            // Words in an unclosed parenthesis before the error are the ones that introduce it
            // (`Flux failed for OSB region 1 (Flux inpainting error: CUDA out of memory`).
            // (An exception's repr opening the error, `err=RuntimeError('CUDA error: out of
            // memory`, is the error's own: the words before it introduce it.)
            let before = exception_repr_opened(&text[..at]).unwrap_or(&text[..at]);
            let before = unclosed_parenthesis(before).unwrap_or(before);
            let words = before
                .split_once(": ")
                .filter(|(class, _)| class.ends_with("Error") || class.ends_with("Exception"))
                .map_or(before, |(_, rest)| rest);
            // Words that introduce the error (`…: CUDA out of memory`), not prose around it; a
            // wrapper's words before the runtime's own prefix count too (`Transcription failed:
            // CUDA failed with error an illegal memory access was encountered`: CTranslate2's
            // `CUDA failed with error` before the error's text).
            let words = match words.trim_end().rsplit_once(':') {
                Some((head, tail)) if !tail.is_empty() && runtime_prefix(tail) => {
                    &words[..head.len() + 1]
                }
                _ => words,
            };
            // (Or a logger's key before it: `could not load model (no success): Unexpected
            // err=`.)
            let trimmed = words.trim_end().to_ascii_lowercase();
            let introduces = trimmed.ends_with(':')
                || [" err=", ":err=", " error=", ":error="]
                    .iter()
                    .any(|key| trimmed.ends_with(key));
            if let Some(phase) = words_phase(words).filter(|_| introduces) {
                return Some((message.line, phase, "the words around the error", words));
            }
        }
    }
    // The app's words ending the line above an error that starts its own line (a logger's
    // message wrapped after its colon: `ERROR:docstrange.pipeline.nanonets_processor:Nanonets
    // OCR extraction failed: ` over `CUDA out of memory. Tried to allocate …`): a logged line
    // (an error level in it), not a reporter's sentence, which `phase::prose` reads.
    if let Some(text) = message
        .line
        .checked_sub(1)
        .filter(|above| *above > 0)
        .and_then(text_of)
        .filter(|above| {
            !above.starts_with([' ', '\t'])
                && above.trim_end().ends_with(':')
                && ["ERROR", "CRITICAL", "FATAL"]
                    .iter()
                    .any(|level| above.contains(level))
        })
    {
        let starts_its_line =
            text_of(message.line).is_some_and(|line| line.trim_start().starts_with(head.as_str()));
        if let Some(phase) = words_phase(text).filter(|_| starts_its_line && reports_error(text)) {
            return Some((
                message.line - 1,
                phase,
                "the words around the error",
                text.trim(),
            ));
        }
    }
    // Ray's memory monitor lists the node's top memory users under its kill (`PID MEM(GB)
    // COMMAND`, raylet `node_manager.cc`): the killed worker's command names the task it ran
    // (`ray::WorkerDict.actor_rollout_generate_sequences`).
    let kept = collected.ooms.iter().find(|kept| kept.line == message.line);
    let ray_phase = |command: &str| {
        let task = command.strip_prefix("ray::")?;
        let method = task.rsplit('.').next().unwrap_or(task);
        words_phase(&method.replace('_', " "))
    };
    if let Some(command) = kept.and_then(|kept| kept.details.killed_process.as_deref()) {
        if let Some(phase) = ray_phase(command) {
            return Some((
                message.line,
                phase,
                RAY_TASK,
                command.trim_start_matches("ray::"),
            ));
        }
    }
    // The worker Ray killed ran no named stage (the driver's `ray::main_task`, killed as the
    // most recently scheduled task): the node's largest user of memory in the same table, a
    // Ray task, names what was filling it (four `ray::WorkerDict.actor_rollout_generate_sequences`
    // at 28 GB each under a 2.8 GB driver).
    if let Some(command) = kept
        .filter(|kept| kept.text.contains("MEM(GB)"))
        .and_then(|kept| largest_ray_user(&kept.text))
    {
        if let Some(phase) = ray_phase(command) {
            return Some((
                message.line,
                phase,
                RAY_LARGEST_USER,
                command.trim_start_matches("ray::"),
            ));
        }
    }
    // A JSON log event that carries the error in a field (`{"event": "embed_failed", …,
    // "error": "CUDA out of memory …"}`, as structlog's `JSONRenderer` and python-json-logger
    // write one): the event's name says what failed.
    if let Some((name, phase)) = text_of(message.line)
        .and_then(json_event_name)
        .and_then(|name| words_phase(name).map(|phase| (name, phase)))
    {
        return Some((
            message.line,
            phase,
            "the name of the JSON log event that carries the error",
            name,
        ));
    }
    // An app's own line (or a reporter's title) that names the failure without its message
    // names the stage with it (Forge `Encountered Out of Memory during Sampling; Unloading all
    // Models...`, `Resource exhausted error during training on GPU`).
    if message.kind == OomKind::NamedWithoutMessage {
        let line = text_of(message.line);
        if let Some((text, phase)) = line.and_then(|text| {
            crate::analyze::phase::prose::line_stage(text).map(|phase| (text, phase))
        }) {
            return Some((
                message.line,
                phase,
                "the line naming the failure without its message",
                text,
            ));
        }
    }
    // The app's node or invocation that raised it, named on the error's line or just above it.
    // Named by the app's own words (ComfyUI's `Error occurred when executing X:`, its report's
    // `Node Type: X`, InvokeAI's `invocation … (x)`), or a ComfyUI report's node title alone on
    // its line, any node but a loader runs the workflow (`workflow_node_phase`); a bare class
    // name elsewhere only by the words of [`node_phase`].
    let comfyui = choose_engine(collected, Some(message)) == EngineName::Comfyui;
    for line in (message.line.saturating_sub(3).max(1)..=message.line).rev() {
        let Some(text) = text_of(line) else {
            continue;
        };
        let Some((name, named_by_app)) = node_named(text, line == message.line) else {
            continue;
        };
        let workflow = named_by_app || (comfyui && camel_case_words(name) >= 2);
        let phase = if workflow {
            workflow_node_phase(name)
        } else {
            node_phase(name)
        };
        if let Some(phase) = phase {
            return Some((line, phase, APP_NODE, name));
        }
    }
    // ComfyUI's dispatch (`execution.py` `map_node_over_list` → `getattr(obj, func)(**inputs)`)
    // calls the node's method: the frame under it is the node's (`encode` of a VAE-encode node,
    // `process` of a custom node), when no deeper frame named the stage.
    if let Some((frame, phase)) = comfyui_node_frame(frames) {
        return Some((
            frame.line,
            phase,
            "the workflow node's method ComfyUI called",
            frame.function.as_str(),
        ));
    }
    // The message logged with the traceback, on the line above its `Traceback` header.
    let start = collected
        .tracebacks
        .iter()
        .rev()
        .copied()
        .find(|start| *start < message.line && message.line - start <= 5000);
    if let Some(start) = start.filter(|start| *start > 1) {
        // Python's `threading.excepthook` (3.10+): `Exception in thread Thread-3 (generate):`
        // names the thread's target function.
        if let Some(text) = text_of(start - 1) {
            let target = text
                .split_once("Exception in thread ")
                .and_then(|(_, rest)| rest.trim_end().strip_suffix("):"))
                .and_then(|rest| rest.rsplit_once(" ("))
                .map(|(_, target)| target);
            if let Some(phase) = target.and_then(name_phase) {
                return Some((
                    start - 1,
                    phase,
                    "the thread's target function",
                    target.unwrap_or_default(),
                ));
            }
        }
        if let Some(text) = text_of(start - 1).filter(|text| reports_error(text)) {
            if let Some(phase) = words_phase(text) {
                return Some((
                    start - 1,
                    phase,
                    "the message logged with the traceback",
                    after_log_prefix(text, phase),
                ));
            }
        }
    }
    // The progress bar running when the traceback (or the error) was printed: a tqdm bar whose
    // description names a stage and that had not reached its total; or the program's status
    // line. Libraries print between it and the error (allocator warnings, a `UserWarning` and
    // its `warnings.warn(` line, XLA's dump of the failing program): those lines say nothing of
    // what the program was doing and are passed over (`is_library_noise`); any other line ends
    // the search.
    let above = start.unwrap_or(message.line);
    let failure_lines: Vec<u64> = collected.ooms.iter().map(|oom| oom.line).collect();
    for line in (above.saturating_sub(STATUS_SEARCH_LINES).max(1)..above).rev() {
        let Some(text) = text_of(line) else {
            break;
        };
        if text.trim().is_empty() {
            continue;
        }
        if status_line_phase(text).is_none()
            && last_progress_bar(text).is_none()
            && (failure_lines.contains(&line) || is_library_noise(text))
        {
            continue;
        }
        if let Some((description, done, total)) = last_progress_bar(text) {
            if done < total {
                if let Some(phase) = words_phase(description) {
                    return Some((
                        line,
                        phase,
                        "the progress bar running when it failed",
                        description,
                    ));
                }
            }
        } else if let Some(phase) = status_line_phase(text) {
            return Some((
                line,
                phase,
                "the program's status line printed just before it failed",
                text.trim(),
            ));
        } else if let Some((phase, words)) = stage_line_phase(text) {
            return Some((
                line,
                phase,
                "the program's log line announcing the stage it started, printed just before \
                 it failed",
                words,
            ));
        } else {
            // The announcement a line or two above, the lines after it its details (the same
            // logger, no result in them).
            let mut details = vec![text];
            for earlier in (line.saturating_sub(2).max(1)..line).rev() {
                let Some(announced) = text_of(earlier) else {
                    break;
                };
                let announced_phase = stage_line_phase(announced);
                if !details.iter().all(|detail| {
                    details_stage(detail, announced)
                        || (announced_phase.is_some_and(|(phase, _)| phase == Phase::Inference)
                            && item_done_short_of_total(detail))
                }) {
                    break;
                }
                if let Some((phase, words)) = announced_phase {
                    return Some((
                        earlier,
                        phase,
                        "the program's log line announcing the stage it started, its details \
                         printed after it until it failed",
                        words,
                    ));
                }
                details.push(announced);
            }
        }
        break;
    }
    // A traceback pasted without its frames: the statement just above the error.
    if !frames.is_empty() {
        return None;
    }
    let first = message.line.saturating_sub(4).max(1);
    for line in (first..message.line).rev() {
        let text = text_of(line)?;
        let code = text.trim();
        if code.is_empty() || code.chars().all(|c| matches!(c, '^' | '~' | ' ')) {
            continue;
        }
        if !text.starts_with([' ', '\t']) {
            break;
        }
        return statement_phase(code)
            .map(|(phase, _)| (line, phase, "the statement printed above the error", code));
    }
    // The caller's code shown just above the error it raised (an issue's snippet: `outputs =
    // model.generate(…)`, then "Then this error occurs:", then the error): its last line with a
    // call, read as a statement; a sentence in between that names a stage itself stops it. A
    // call that runs a whole training (`trainer.fit(…)`, `trainer.train()`: validation and
    // checkpoints too) shows no stage without a frame below it.
    let first = message.line.saturating_sub(6).max(1);
    for line in (first..message.line).rev() {
        let text = text_of(line)?;
        // An inline-code span (`` `pipe.to("cuda")` ``) is the code itself, and so is code
        // glued to a fence's opening (`` ``` self.weight = Parameter(…) ``); a fence alone or
        // with its language tag is passed over.
        let fenced = text.trim().strip_prefix("```");
        if fenced.is_some_and(|rest| !rest.contains('(')) {
            continue;
        }
        let code = text.trim().trim_matches('`').trim();
        if code.is_empty() {
            continue;
        }
        if !code.contains('(') {
            if words_phase(code).is_some()
                || crate::analyze::phase::prose::line_stage(code).is_some()
            {
                return None;
            }
            continue;
        }
        // (An estimator's or a Keras model's `fit(X, y)` is its training: `model.fit(pool,
        // eval_set=…)` of CatBoost, `svr.fit(X_train, y_train)` of cuML or scikit-learn.)
        let trainer = code.to_ascii_lowercase().contains("trainer");
        return statement_phase(code)
            .filter(|(_, what)| !(what.contains("training run") && trainer))
            .map(|(phase, _)| (line, phase, "the code shown just above the error", code));
    }
    None
}

/// The name of the event a JSON log line records (its `event`, `msg`, `message` or `action`
/// field: structlog `processors.JSONRenderer` names it `event`, python-json-logger `message`),
/// when the line is one JSON object and the name is a short identifier-like word group
/// (`embed_failed`, `batch_done`, `request failed while embedding`), not the error's own text.
pub(super) fn json_event_name(text: &str) -> Option<&str> {
    // (A long record is kept cut: its start is enough.)
    let trimmed = text.trim();
    if !trimmed.starts_with('{') {
        return None;
    }
    ["event", "msg", "message", "action"]
        .iter()
        .find_map(|key| {
            let quoted = format!("\"{key}\"");
            let at = trimmed.find(&quoted)? + quoted.len();
            let value = trimmed[at..].trim_start().strip_prefix(':')?.trim_start();
            let value = value.strip_prefix('"')?;
            let name = &value[..value.find('"')?];
            let lower = name.to_ascii_lowercase();
            (!name.is_empty()
                && name.len() <= 60
                && !lower.contains("memory")
                && !lower.contains("error")
                && name
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.' | ' ')))
            .then_some(name)
        })
}
