//! Pipeline parallelism: how vLLM splits the layers into stages, and what each stage holds.

use super::*;

/// The budget's context for one pipeline stage: its KV shape and replicated bytes.
pub(super) fn stage_context<'a>(
    model: &'a ModelShape,
    (shape, replicated): &'a (Option<KvShape>, u64),
    kv_num: u64,
    kv_den: u64,
    pipeline: u64,
) -> BudgetContext<'a> {
    BudgetContext {
        model,
        kv_shape: shape.as_ref(),
        kv_num,
        kv_den,
        replicated_bytes: *replicated,
        pipeline,
    }
}

/// The decoder layer a tensor belongs to (`….layers.12.…`, `blk.12.…`).
pub(super) fn layer_of(name: &str) -> Option<u64> {
    let rest = name
        .split_once(".layers.")
        .map(|(_, rest)| rest)
        .or_else(|| name.strip_prefix("layers."))
        .or_else(|| name.strip_prefix("blk."))?;
    rest.split('.').next()?.parse().ok()
}

/// Layers per stage as vLLM splits them (`get_pp_indices` in `vllm/distributed/utils.py`):
/// `layers / stages` each, the remainder one by one from the second-to-last stage backwards,
/// so the first stage (embeddings) and the last (norm and `lm_head`) get the fewest.
pub(super) fn pipeline_layer_counts(layers: u64, stages: u64) -> Vec<u64> {
    let mut counts = vec![layers / stages; stages as usize];
    let remaining = (layers % stages) as usize;
    for back in 2..remaining + 2 {
        let index = counts.len() - back;
        counts[index] += 1;
    }
    counts
}

/// Splits the tensors over `stages` pipeline stages: each decoder layer to its stage, the
/// embeddings to the first, everything else (final norm, `lm_head`) to the last. With tied
/// embeddings the last stage holds its own copy for `lm_head`.
pub(super) fn pipeline_stages(
    tensors: &[TensorFacts],
    layers: u64,
    stages: u64,
    tied_embeddings: bool,
) -> Vec<PipelineStage> {
    let counts = pipeline_layer_counts(layers, stages);
    let mut ranges = Vec::new();
    let mut start = 0;
    for count in counts {
        ranges.push(start..start + count);
        start += count;
    }
    let last = ranges.len() - 1;
    let is_embedding = |name: &str| {
        name.contains("embed_tokens") || name.contains("token_embd") || name.contains("wte")
    };
    let mut split: Vec<PipelineStage> = ranges
        .into_iter()
        .enumerate()
        .map(|(index, layers)| PipelineStage {
            layers,
            tensors: Vec::new(),
            extra: match (index == 0, index == last) {
                (true, true) => " + embeddings, norm and lm_head".to_string(),
                (true, false) => " + embeddings".to_string(),
                (false, true) => " + norm and lm_head".to_string(),
                (false, false) => String::new(),
            },
        })
        .collect();
    for tensor in tensors {
        let stage = match layer_of(&tensor.name) {
            Some(layer) => split
                .iter()
                .position(|stage| stage.layers.contains(&layer))
                .unwrap_or(last),
            None if is_embedding(&tensor.name) => {
                if tied_embeddings {
                    split[last].tensors.push(tensor.clone());
                }
                0
            }
            None => last,
        };
        split[stage].tensors.push(tensor.clone());
    }
    split
}
