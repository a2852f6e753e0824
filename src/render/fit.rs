//! Render `oomdoc fit`: text (the reference layout), Markdown and HTML built from the same
//! lines. Pure: the report is computed by `analyze::fit`; every number shown carries its
//! source in brackets (checkpoint headers, config.json, command line, oomdoc assumption).

use crate::model::checkpoint::{Budget, CheckpointKind, FitReport, FitVerdict, LlamaCppPlacement};
use crate::model::{Bytes, Source};
use crate::render::html;
use crate::render::style::Style;
use crate::render::wrap::visible_width;

fn exact(bytes: Bytes) -> String {
    if bytes.get() < 1024 {
        return bytes.to_string();
    }
    format!("{bytes} ({} B)", group(bytes.get()))
}

fn group(value: u64) -> String {
    let digits = value.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    out
}

enum Line {
    Heading(String),
    Row(String, String),
    Text(String),
    Good(String),
    Bad(String),
    Blank,
}

fn lines(report: &FitReport) -> Vec<Line> {
    let mut out = Vec::new();
    let kind = match report.kind {
        CheckpointKind::SafetensorsDirectory => "model directory",
        CheckpointKind::SafetensorsFile => "safetensors file",
        CheckpointKind::Gguf => "GGUF",
    };
    let file_count = report.files.len();
    out.push(Line::Heading(format!(
        "oomdoc fit: {} ({kind}, {file_count} file{})",
        report.path,
        if file_count == 1 { "" } else { "s" }
    )));
    out.push(Line::Blank);

    let weights = &report.weights;
    out.push(Line::Heading("Weights [checkpoint headers]".to_string()));
    out.push(Line::Row(
        "total".to_string(),
        format!(
            "{} in {} tensors, {} parameters",
            exact(weights.total_bytes),
            weights.tensors,
            group(report.parameters)
        ),
    ));
    for (dtype, bytes) in &weights.by_dtype {
        out.push(Line::Row(format!("  {dtype}"), exact(*bytes)));
    }
    for (role, bytes) in &weights.quantization_parts {
        out.push(Line::Row(format!("  quantization: {role}"), exact(*bytes)));
    }
    if weights.loaded_bytes != weights.total_bytes {
        out.push(Line::Row(
            "loaded".to_string(),
            format!(
                "{} once F32 tensors are cast to the model dtype",
                exact(weights.loaded_bytes)
            ),
        ));
    }
    if weights.tied_embeddings {
        out.push(Line::Row(
            "lm_head".to_string(),
            "absent: tied to the input embeddings, allocated once".to_string(),
        ));
    }
    out.push(Line::Blank);

    let declared = &report.declared_format;
    out.push(Line::Heading(
        if report.kind == CheckpointKind::Gguf {
            "Declared format [GGUF metadata, names] vs tensor types"
        } else {
            "Declared format [config.json, names] vs headers"
        }
        .to_string(),
    ));
    let mut claims = Vec::new();
    if let Some(dtype) = &declared.config_dtype {
        claims.push(format!("dtype {dtype}"));
    }
    if let Some(method) = &declared.quant_method {
        let mut text = format!("quant_method {method}");
        if let Some(bits) = declared.bits {
            text.push_str(&format!(", {bits}-bit"));
        }
        if let Some(group) = declared.group_size {
            text.push_str(&format!(", group {group}"));
        }
        claims.push(text);
    }
    if let Some(file_type) = &declared.gguf_file_type {
        claims.push(format!("GGUF file type {file_type}"));
    }
    if !declared.name_hints.is_empty() {
        claims.push(format!("name says {}", declared.name_hints.join(", ")));
    }
    out.push(Line::Row(
        "declared".to_string(),
        if claims.is_empty() {
            "nothing".to_string()
        } else {
            claims.join("; ")
        },
    ));
    out.push(Line::Row(
        "headers hold".to_string(),
        declared.found.clone(),
    ));
    if report.mismatches.is_empty() {
        out.push(Line::Good("  no mismatch".to_string()));
    }
    for mismatch in &report.mismatches {
        out.push(Line::Bad(format!(
            "  mismatch ({}): {}",
            mismatch.kind, mismatch.message
        )));
    }
    out.push(Line::Blank);

    let model = &report.model;
    out.push(Line::Heading(format!(
        "KV cache [{}]",
        if model.source_detail.is_empty() {
            "no config"
        } else {
            &model.source_detail
        }
    )));
    match &report.kv_cache {
        Some(kv) => {
            out.push(Line::Row(
                "attention".to_string(),
                format!(
                    "{}: {} layers ({} full, {} sliding{}), {} heads, {} KV heads, head size {}",
                    kv.attention.to_uppercase(),
                    model.layers.unwrap_or(0),
                    model.full_attention_layers,
                    model.sliding_window_layers,
                    if model.no_kv_layers > 0 {
                        format!(", {} without KV", model.no_kv_layers)
                    } else {
                        String::new()
                    },
                    model
                        .attention_heads
                        .map_or("?".to_string(), |h| h.to_string()),
                    model.kv_heads.map_or("?".to_string(), |h| h.to_string()),
                    model.head_dim.map_or("?".to_string(), |h| h.to_string()),
                ),
            ));
            out.push(Line::Row(
                "per token".to_string(),
                format!("{} = {}", exact(kv.bytes_per_token), kv.formula),
            ));
            if let Some(window) = kv.sliding_window {
                out.push(Line::Row(
                    "  full layers".to_string(),
                    format!(
                        "{} per token of context",
                        exact(kv.full_attention_bytes_per_token)
                    ),
                ));
                out.push(Line::Row(
                    "  sliding layers".to_string(),
                    format!(
                        "{} per token, for at most {window} tokens (the window; vLLM budgets window − 1 + max_num_batched_tokens per request)",
                        exact(kv.sliding_window_bytes_per_token)
                    ),
                ));
            }
        }
        None => out.push(Line::Text("  not computed (see limitations)".to_string())),
    }
    if let Some(context) = model.max_position_embeddings {
        out.push(Line::Row(
            "context".to_string(),
            format!("{context} tokens (model maximum)"),
        ));
    }
    out.push(Line::Blank);

    if let (Some(budget), Some(verdict)) = (&report.budget, &report.verdict) {
        match &budget.llama_cpp {
            Some(placement) => llama_cpp_budget(&mut out, budget, placement, verdict),
            None => vllm_budget(&mut out, report, budget, verdict),
        }
        alternatives(&mut out, report);
        out.push(Line::Blank);
    }

    if !report.limitations.is_empty() {
        out.push(Line::Heading("Limitations".to_string()));
        for limitation in &report.limitations {
            out.push(Line::Text(format!("  - {limitation}")));
        }
    }
    out
}

/// The budget as vLLM computes it: total × utilization − weights − allowances = KV cache.
fn vllm_budget(out: &mut Vec<Line>, report: &FitReport, budget: &Budget, verdict: &FitVerdict) {
    let model = &report.model;
    let gpu = budget.gpu.clone().unwrap_or_else(|| "GPU".to_string());
    out.push(Line::Heading(format!(
        "Budget per GPU [{}]{}",
        budget.gpu_total_basis,
        match (budget.tensor_parallel_size, budget.pipeline_parallel_size) {
            (1, 1) => String::new(),
            (tp, 1) => format!(", tensor parallel {tp}"),
            (1, pp) => format!(", pipeline parallel {pp}"),
            (tp, pp) => format!(", tensor parallel {tp} × pipeline parallel {pp}"),
        }
    )));
    out.push(Line::Row(
        "total".to_string(),
        format!("{} ({gpu})", exact(budget.gpu_total_bytes)),
    ));
    out.push(Line::Row(
        format!("× {}", budget.gpu_memory_utilization),
        format!(
            "{} usable [`--gpu-memory-utilization`]",
            exact(budget.usable_bytes)
        ),
    ));
    out.push(Line::Row(
        "− weights".to_string(),
        format!(
            "{} [checkpoint headers]",
            exact(budget.weights_per_gpu_bytes)
        ),
    ));
    for allowance in &budget.allowances {
        out.push(Line::Row(
            format!("− {}", allowance.name),
            format!("{} [{}]", allowance.bytes, allowance.basis),
        ));
    }
    out.push(Line::Row(
        "= KV cache".to_string(),
        exact(budget.kv_budget_bytes),
    ));
    if budget.tensor_parallel_size > 1 || budget.pipeline_parallel_size > 1 {
        out.push(Line::Text(format!("  {}", budget.replicated)));
    }
    out.push(Line::Row(
        "max_model_len".to_string(),
        format!(
            "{} [{}]",
            budget.max_model_len,
            match budget.max_model_len_source {
                crate::model::Source::Checkpoint => model.source_detail.as_str(),
                other => other.label(),
            }
        ),
    ));
    out.push(Line::Blank);
    let verdict_line = format!("Verdict: {}", verdict.summary);
    out.push(if verdict.fits {
        Line::Good(verdict_line)
    } else {
        Line::Bad(verdict_line)
    });
    if report.kv_cache.is_some() {
        out.push(Line::Row(
            "KV tokens".to_string(),
            format!(
                "{} per GPU at {} per token",
                group(verdict.max_kv_tokens),
                exact(verdict.kv_bytes_per_token_per_gpu)
            ),
        ));
        out.push(Line::Row(
            "one sequence".to_string(),
            format!(
                "{} for {} tokens",
                exact(verdict.kv_bytes_per_sequence),
                budget.max_model_len
            ),
        ));
        out.push(Line::Row(
            "concurrency".to_string(),
            format!("{:.2} sequences of max_model_len", verdict.max_concurrency),
        ));
        out.push(Line::Row(
            "longest".to_string(),
            format!(
                "{} tokens in one sequence",
                group(verdict.max_model_len_that_fits)
            ),
        ));
    }
}

/// The budget as llama.cpp allocates it: weights of the offloaded layers, the KV cache of
/// `n_ctx` cells, the compute buffer and the CUDA context, against the GPU's total.
fn llama_cpp_budget(
    out: &mut Vec<Line>,
    budget: &Budget,
    placement: &LlamaCppPlacement,
    verdict: &FitVerdict,
) {
    let gpu = budget.gpu.clone().unwrap_or_else(|| "GPU".to_string());
    out.push(Line::Heading(format!(
        "Budget on one GPU as llama.cpp loads it [{}]",
        budget.gpu_total_basis
    )));
    out.push(Line::Row(
        "total".to_string(),
        format!("{} ({gpu})", exact(budget.gpu_total_bytes)),
    ));
    let layers = match placement.n_gpu_layers {
        Some(ngl) => format!("`--n-gpu-layers {ngl}`"),
        None => "all layers, llama.cpp's default".to_string(),
    };
    out.push(Line::Row(
        "− weights".to_string(),
        format!(
            "{} [checkpoint headers; {layers}: {} of {} repeating layers{}]",
            exact(budget.weights_per_gpu_bytes),
            placement.gpu_layers,
            placement.layers,
            if placement.output_on_gpu {
                " + output layer"
            } else {
                ""
            }
        ),
    ));
    let cells = match placement.sliding_window_cells {
        Some(window) => format!("{} cells, sliding layers {window}", placement.n_ctx),
        None => format!("{} cells", placement.n_ctx),
    };
    let asked = if placement.n_ctx_requested == placement.n_ctx {
        String::new()
    } else {
        format!(", `-c {}` rounded up to 256", placement.n_ctx_requested)
    };
    out.push(Line::Row(
        "− KV cache".to_string(),
        format!(
            "{} [{cells}{asked}; K {}, V {}; {}]",
            exact(placement.kv_on_gpu_bytes),
            placement.cache_type_k,
            placement.cache_type_v,
            match budget.max_model_len_source {
                Source::Checkpoint => "context from the GGUF metadata",
                Source::User => "context from `--ctx-size`",
                _ => "context assumed",
            }
        ),
    ));
    for allowance in &budget.allowances {
        out.push(Line::Row(
            format!("− {}", allowance.name),
            format!("{} [{}]", allowance.bytes, allowance.basis),
        ));
    }
    let needed = budget
        .weights_per_gpu_bytes
        .saturating_add(placement.kv_on_gpu_bytes)
        .saturating_add(budget.allowances.iter().map(|a| a.bytes).sum());
    out.push(Line::Row(
        if verdict.fits { "= free" } else { "= missing" }.to_string(),
        if verdict.fits {
            exact(budget.gpu_total_bytes.saturating_sub(needed))
        } else {
            exact(verdict.shortfall_bytes)
        },
    ));
    out.push(Line::Text(format!("  {}", budget.replicated)));
    out.push(Line::Blank);
    let verdict_line = format!("Verdict: {}", verdict.summary);
    out.push(if verdict.fits {
        Line::Good(verdict_line)
    } else {
        Line::Bad(verdict_line)
    });
    out.push(Line::Row(
        "KV per token".to_string(),
        format!(
            "{} on the GPU (offloaded layers)",
            exact(verdict.kv_bytes_per_token_per_gpu)
        ),
    ));
    out.push(Line::Row(
        "longest".to_string(),
        format!(
            "{} tokens of context with these layers on the GPU",
            group(verdict.max_model_len_that_fits)
        ),
    ));
}

/// What would fit instead.
fn alternatives(out: &mut Vec<Line>, report: &FitReport) {
    if report.alternatives.is_empty() {
        return;
    }
    out.push(Line::Blank);
    out.push(Line::Heading("What would fit".to_string()));
    let llama = report
        .budget
        .as_ref()
        .is_some_and(|budget| budget.llama_cpp.is_some());
    for alternative in &report.alternatives {
        let tokens = if llama {
            format!("{} KV cells", group(alternative.max_kv_tokens))
        } else {
            format!("{} KV tokens", group(alternative.max_kv_tokens))
        };
        out.push(Line::Text(format!(
            "  - {} → weights {} per GPU, {tokens}",
            alternative.description, alternative.weights_per_gpu_bytes
        )));
    }
}

/// Columns of the text report: longer lines wrap at a space, continued under their value.
const WIDTH: usize = 100;

/// `text` cut at spaces into lines of at most `WIDTH` columns; lines after the first start
/// with `indent` spaces. A single word longer than a line (a path) stays whole.
fn wrap(text: &str, indent: usize) -> Vec<String> {
    let body = text.trim_start_matches(' ');
    let mut line = text[..text.len() - body.len()].to_string();
    let mut columns = visible_width(&line);
    let mut fresh = true;
    let mut lines = Vec::new();
    for word in body.split(' ') {
        let width = visible_width(word);
        if !fresh && columns + 1 + width > WIDTH {
            lines.push(std::mem::take(&mut line));
            line = " ".repeat(indent);
            columns = indent;
            fresh = true;
        }
        if !fresh {
            line.push(' ');
            columns += 1;
        }
        line.push_str(word);
        columns += width;
        fresh = false;
    }
    lines.push(line);
    lines
}

/// Where a wrapped line continues: two columns in from its start (past a `- ` bullet).
fn hanging_indent(text: &str) -> usize {
    text.len() - text.trim_start_matches(' ').len() + 2
}

/// Text for a terminal, at most 100 columns wide.
pub fn text(report: &FitReport, style: Style) -> String {
    let mut out = String::new();
    let mut push = |lines: Vec<String>, paint: &dyn Fn(&str) -> String| {
        for line in lines {
            out.push_str(&paint(&line));
            out.push('\n');
        }
    };
    for line in lines(report) {
        match line {
            Line::Heading(text) => push(wrap(&text, 2), &|l| style.bold(l)),
            Line::Row(label, value) => {
                let row = format!("  {label:<18} {value}");
                push(wrap(&row, 21), &|l| l.to_string());
            }
            Line::Text(text) => push(wrap(&text, hanging_indent(&text)), &|l| l.to_string()),
            Line::Good(text) => push(wrap(&text, hanging_indent(&text)), &|l| style.good(l)),
            Line::Bad(text) => push(wrap(&text, hanging_indent(&text)), &|l| style.bad(l)),
            Line::Blank => push(vec![String::new()], &|l| l.to_string()),
        }
    }
    out
}

/// GitHub Markdown.
pub fn markdown(report: &FitReport) -> String {
    let mut out = String::new();
    let mut in_table = false;
    for line in lines(report) {
        let is_row = matches!(line, Line::Row(..));
        if in_table && !is_row {
            out.push('\n');
            in_table = false;
        }
        match line {
            Line::Heading(text) => out.push_str(&format!("### {text}\n\n")),
            Line::Row(label, value) => {
                if !in_table {
                    out.push_str("| | |\n|---|---|\n");
                    in_table = true;
                }
                out.push_str(&format!(
                    "| {} | {} |\n",
                    label.trim().replace('|', "\\|"),
                    value.replace('|', "\\|")
                ));
            }
            Line::Text(text) | Line::Good(text) | Line::Bad(text) => {
                out.push_str(&format!("{}\n\n", text.trim()));
            }
            Line::Blank => {}
        }
    }
    out
}

/// One self-contained HTML page.
pub fn html(report: &FitReport) -> String {
    let mut body = String::new();
    let mut in_table = false;
    for line in lines(report) {
        let is_row = matches!(line, Line::Row(..));
        if in_table && !is_row {
            body.push_str("</table>\n");
            in_table = false;
        }
        match line {
            Line::Heading(text) => body.push_str(&format!("<h2>{}</h2>\n", html::escape(&text))),
            Line::Row(label, value) => {
                if !in_table {
                    body.push_str("<table>\n");
                    in_table = true;
                }
                body.push_str(&format!(
                    "<tr><th>{}</th><td>{}</td></tr>\n",
                    html::escape(label.trim()),
                    html::escape(&value)
                ));
            }
            Line::Text(text) => body.push_str(&format!("<p>{}</p>\n", html::escape(text.trim()))),
            Line::Good(text) => body.push_str(&format!(
                "<p class=\"good\">{}</p>\n",
                html::escape(text.trim())
            )),
            Line::Bad(text) => body.push_str(&format!(
                "<p class=\"bad\">{}</p>\n",
                html::escape(text.trim())
            )),
            Line::Blank => {}
        }
    }
    if in_table {
        body.push_str("</table>\n");
    }
    html::page(&format!("oomdoc fit: {}", report.path), "", &body)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn long_lines_wrap_under_their_value() {
        let row = format!(
            "  {:<18} {}",
            "− cuda_context",
            "word ".repeat(40).trim_end()
        );
        let lines = wrap(&row, 21);
        assert!(
            lines.iter().all(|line| line.chars().count() <= WIDTH),
            "{lines:?}"
        );
        assert!(lines[0].starts_with("  − cuda_context     word"));
        assert!(lines[1..]
            .iter()
            .all(|line| line.starts_with(&" ".repeat(21)) && !line.starts_with(&" ".repeat(22))));
        assert_eq!(lines.join(" ").split_whitespace().count(), 42);
        // A short line is left alone, indentation included.
        assert_eq!(wrap("  - short", 4), ["  - short"]);
        assert_eq!(hanging_indent("  - item"), 4);
        // A word longer than the width stays whole.
        let path = "x".repeat(120);
        assert_eq!(wrap(&path, 2), std::slice::from_ref(&path));
    }
}
