//! The stage an XLA program shows by its operations' names: JAX writes each operation's name
//! stack into the HLO metadata (`metadata={op_name="jit(train_step)/jit(main)/jvp(Model)/…"}`),
//! which XLA prints where an operation failed (the autotuner's `Could not get config for HLO: …
//! Status: RESOURCE_EXHAUSTED …`, the `BufferAssignment OOM Debugging` listing's `Operator:
//! op_name="…"` lines).
//!
//! Read from jax-ml/jax 0.4–0.8: `jax/_src/source_info_util.py` (`NameStack`: a transformation
//! wraps the names under it, `transform_name_stack`), `jax/_src/interpreters/ad.py` (`jvp`,
//! `linearize` push `jvp`; `backward_pass` pushes `transpose`), `jax/_src/pjit.py` (a jitted
//! function's program is named `jit(<function>)`, `pjit(…)` before 0.4.2x; `pmap(…)` in
//! `interpreters/pxla.py`). Under `jax.grad` / `value_and_grad` / `vjp` the forward pass is
//! traced through `jvp` and the backward pass through `transpose(jvp(…))`, so an operation of a
//! gradient computation names `jvp(`; a program without it computes no gradient.

use super::common::has;
use super::LineFacts;
use crate::model::explain::Phase;

/// Markers of the name stack's first transformation (the program), after `op_name="`.
const PROGRAMS: [&str; 3] = ["jit(", "pjit(", "pmap("];

/// Words of a program name that say it trains (`train_step`, `update_fn`, `apply_grads`).
const TRAINING_WORDS: [&str; 4] = ["train", "update", "grad", "optim"];

/// Words of a program name that say it generates or evaluates (`generate`, `sample_step`,
/// `eval_step`, `predict_fn`, `inference_step_with_cache`).
const INFERENCE_WORDS: [&str; 6] = ["generate", "sample", "decode", "predict", "infer", "eval"];

/// The stage of the program whose operation XLA printed on a failure's line: a name stack with a
/// gradient (`jvp(`, `transpose(`) or a program named for training → training step; a program
/// named for generation or evaluation, or a program of the caller's own function running a
/// network's layer with no gradient in its names → inference (its forward pass). A program
/// with no layer (a numeric routine: a PCA, a solve) shows no stage, nor one that is one
/// operation run
/// outside any jitted function (JAX compiles each eager operation alone, named after it:
/// `jit(concatenate)/jit(main)/concatenate[dimension=0]`; `jax.numpy`'s jitted helpers
/// `jit(_einsum)`, `jit(_where)`) shows no stage.
pub(super) fn program_stage(text: &str, facts: &mut LineFacts) {
    // Only where an operation failed: an OOM's buffer listing, the autotuner's or the
    // runtime's status (not, e.g., a slow constant folding warning printing an operation).
    let failed = has(text, "Operator: ")
        || has(text, "Status: ")
        || has(text, "Could not get config for HLO")
        || has(text, "RESOURCE_EXHAUSTED");
    if !failed {
        return;
    }
    let Some(names) = text
        .split_once("op_name=\"")
        .and_then(|(_, rest)| rest.split('"').next())
    else {
        return;
    };
    if let Some(phase) = name_stack_stage(names) {
        facts.failed_phase_hint = Some(phase);
    }
}

/// The stage a name stack (`jit(f)/jit(main)/transpose(jvp(f))/dot_general[…]`) shows.
fn name_stack_stage(names: &str) -> Option<Phase> {
    let mut segments = names.split('/');
    let program = segments.next()?;
    let name = PROGRAMS
        .iter()
        .find_map(|open| program.strip_prefix(open))?
        .strip_suffix(')')?;
    if name.is_empty() || !name.chars().all(|c| c.is_alphanumeric() || c == '_') {
        return None;
    }
    let lower = name.to_ascii_lowercase();
    if TRAINING_WORDS.iter().any(|word| lower.contains(word)) {
        return Some(Phase::TrainingStep);
    }
    let rest: Vec<&str> = segments.collect();
    if rest.iter().any(|segment| differentiates(segment)) {
        return Some(Phase::TrainingStep);
    }
    if INFERENCE_WORDS.iter().any(|word| lower.contains(word)) {
        return Some(Phase::Inference);
    }
    // The innermost operation, without its parameters (`concatenate[dimension=0]`).
    let operation = rest
        .last()
        .map(|last| last.split('[').next().unwrap_or(last))
        .unwrap_or("");
    let eager = name.starts_with('_') || name == operation;
    (!eager && shows_a_model(&rest)).then_some(Phase::Inference)
}

/// Whether the name stack shows a network's layer: a module's scope (Flax and Haiku name their
/// modules' calls in it by class, `Transformer/Block_0/Dense_0/dot_general`,
/// `FlaxBloomForCausalLMModule/lm_head/…`) or a convolution (`conv_general_dilated`). A jitted
/// numeric routine (a PCA's `jit(pca)/sub`, `jit(solve)/dot_general`) runs no model: no stage.
fn shows_a_model(segments: &[&str]) -> bool {
    let Some((_, scopes)) = segments.split_last() else {
        return false;
    };
    let module = scopes
        .iter()
        .any(|scope| scope.starts_with(|c: char| c.is_ascii_uppercase()));
    let convolution = segments
        .last()
        .is_some_and(|operation| operation.starts_with("conv_general_dilated"));
    module || convolution
}

/// Whether a name-stack segment is a gradient's transformation: `jvp(…)`, `transpose(jvp(…))`
/// (not `custom_jvp_call`, an operation, nor a `transpose[permutation=…]` operation).
fn differentiates(segment: &str) -> bool {
    ["jvp(", "transpose("].iter().any(|word| {
        segment.match_indices(word).any(|(at, _)| {
            let before = at.checked_sub(1).map(|at| segment.as_bytes()[at]);
            before.is_none_or(|byte| !(byte.is_ascii_alphanumeric() || byte == b'_'))
        })
    })
}

#[cfg(test)]
mod tests {
    use super::super::parse_line_scan;
    use super::*;

    fn hint(line: &str) -> Option<Phase> {
        parse_line_scan(line).failed_phase_hint
    }

    #[test]
    fn a_gradient_in_the_name_stack_is_a_training_step() {
        let listing = |names: &str| {
            format!(
                "\t\tOperator: op_name=\"{names}\" source_file=\"/src/model.py\" source_line=41"
            )
        };
        assert_eq!(
            hint(&listing(
                "jit(step)/jit(main)/transpose(jvp(Net))/Net.mlp/dot_general"
            )),
            Some(Phase::TrainingStep)
        );
        assert_eq!(
            hint(&listing("pmap(step)/jit(main)/jvp(Net)/Net.attn/exp")),
            Some(Phase::TrainingStep)
        );
        // Named for training, wherever its operation stands (an optimizer update outside jvp).
        assert_eq!(
            hint(&listing("pjit(train_step)/jit(main)/mul")),
            Some(Phase::TrainingStep)
        );
        assert_eq!(
            hint(&listing("jit(sample_tokens)/jit(main)/Net/dot_general")),
            Some(Phase::Inference)
        );
        assert_eq!(
            hint(&listing(
                "jit(apply_fn)/jit(main)/Transformer/Dense_0/dot_general"
            )),
            Some(Phase::Inference)
        );
    }

    #[test]
    fn a_program_without_a_gradient_is_its_forward_pass() {
        let line = "E0101 00:00:00.000000 1 config_assigner.cc:536] Could not get config for HLO: \
                    %fusion.3 = f32[8,512,512,32]{3,2,1,0} fusion(%p0), kind=kLoop, \
                    metadata={op_name=\"jit(embed_images)/conv_general_dilated\" \
                    stack_frame_id=3}. Status: NOT_FOUND: All configs failed";
        assert_eq!(hint(line), Some(Phase::Inference));
        // A custom_jvp call or a transpose operation is not a gradient.
        let line =
            "}, metadata={op_name=\"jit(embed)/Encoder/custom_jvp_call/transpose[permutation=\
                    (1, 0)]\"}. Status: RESOURCE_EXHAUSTED: Out of memory while trying to allocate";
        assert_eq!(hint(line), Some(Phase::Inference));
        // A numeric routine with no layer of a network: no model runs.
        let line = "}, metadata={op_name=\"jit(pca)/sub\" stack_frame_id=2}. Status: \
                    RESOURCE_EXHAUSTED: Out of memory while trying to allocate 4.02GiB";
        assert_eq!(hint(line), None);
    }

    #[test]
    fn eager_operations_and_other_lines_show_no_stage() {
        for line in [
            // One eager operation compiled alone, or a jax.numpy helper.
            "\t\tOperator: op_name=\"jit(concatenate)/jit(main)/concatenate[dimension=0]\" \
             source_file=\"/src/x.py\" source_line=2",
            "\t\tOperator: op_name=\"jit(_einsum)/jit(main)/dot_general\" source_line=2",
            // No failure on the line: a slow constant folding warning.
            "W slow_operation_alarm.cc:65] Constant folding an instruction is taking > 1s: \
             %reduce = f32[] reduce(%a), metadata={op_name=\"jit(features)/reduce_sum\"}",
            // Not a program's name stack.
            "\t\tOperator: op_name=\"reduce_sum\" source_line=2",
            "\t\tOperator: op_name=\"jit(a b)/x\" source_line=2",
            "\t\tOperator: op_name=\"jit(",
        ] {
            assert_eq!(hint(line), None, "{line}");
        }
    }
}
