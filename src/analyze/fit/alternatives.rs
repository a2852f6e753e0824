//! What would fit instead: another card, more tensor parallelism, a quantized checkpoint, an
//! fp8 KV cache, a shorter context.

use super::*;

#[expect(
    clippy::too_many_arguments,
    reason = "one call site; the pieces come from analyze"
)]
pub(super) fn alternatives(
    context: &BudgetContext<'_>,
    options: &FitOptions,
    gpu: &GpuBudget,
    tensors: &[TensorFacts],
    weights_bytes: u64,
    budget: &Budget,
    verdict: &FitVerdict,
    model_dtype_bytes: u64,
) -> Vec<Alternative> {
    let mut list = Vec::new();
    let mut scratch = Vec::new();
    let tp = budget.tensor_parallel_size;
    let check = |gpu: &GpuBudget, weights: u64, tp: u64, scratch: &mut Vec<String>| {
        evaluate(context, options, gpu, weights, tp, scratch)
    };
    // A larger card class.
    if let Some(card) = options.cards.iter().find(|card| {
        card.total_bytes > gpu.total && {
            let candidate = card_budget(card);
            check(&candidate, weights_bytes, tp, &mut scratch).1.fits
        }
    }) {
        let (b, v) = check(&card_budget(card), weights_bytes, tp, &mut scratch);
        list.push(Alternative {
            kind: "card".to_string(),
            description: format!(
                "a larger card: {} ({}){}",
                card.name,
                card.total_bytes,
                if tp > 1 {
                    format!(" × {tp}")
                } else {
                    String::new()
                }
            ),
            weights_per_gpu_bytes: b.weights_per_gpu_bytes,
            max_kv_tokens: v.max_kv_tokens,
        });
    }
    // More GPUs of this card.
    let heads = context.model.attention_heads.unwrap_or(0);
    for candidate_tp in [2u64, 4, 8] {
        if candidate_tp <= tp || (heads > 0 && heads % candidate_tp != 0) {
            continue;
        }
        let (b, v) = check(gpu, weights_bytes, candidate_tp, &mut scratch);
        if v.fits {
            list.push(Alternative {
                kind: "tensor_parallel".to_string(),
                description: format!(
                    "`--tensor-parallel-size {candidate_tp}` on {candidate_tp} of these GPUs"
                ),
                weights_per_gpu_bytes: b.weights_per_gpu_bytes,
                max_kv_tokens: v.max_kv_tokens,
            });
            break;
        }
    }
    let original_weights_fit = budget.kv_budget_bytes.get() > 0;
    // A quantized checkpoint, estimated from the same headers.
    let non_float: u64 = tensors
        .iter()
        .filter(|t| !is_float(&t.dtype))
        .map(|t| t.bytes)
        .fold(0u64, u64::saturating_add);
    let is_quantized = non_float.saturating_mul(4) > weights_bytes;
    if !is_quantized && model_dtype_bytes >= 2 {
        let linear: u64 = tensors
            .iter()
            .filter(|t| t.dims == 2 && is_float(&t.dtype) && !is_embedding_or_head(&t.name))
            .map(|t| t.numel)
            .fold(0u64, u64::saturating_add);
        let linear_loaded: u64 = tensors
            .iter()
            .filter(|t| t.dims == 2 && is_float(&t.dtype) && !is_embedding_or_head(&t.name))
            .map(|t| t.numel.saturating_mul(model_dtype_bytes))
            .fold(0u64, u64::saturating_add);
        let rest = weights_bytes.saturating_sub(linear_loaded);
        let candidates = [
            ("fp8 (W8, e.g. `--quantization fp8` or an FP8 checkpoint): linear weights at 1 B + 128×128-block F32 scales", rest.saturating_add(linear).saturating_add(linear / 16384 * 4)),
            ("int4 (GPTQ/AWQ, group 128): linear weights at 0.5 B + F16 scales and 4-bit zeros per 128", rest.saturating_add(linear / 2 + linear / 128 * 2 + linear / 256)),
        ];
        let evaluated: Vec<(&str, u64, Budget, FitVerdict)> = candidates
            .iter()
            .map(|(label, bytes)| {
                let (b, v) = check(gpu, *bytes, tp, &mut scratch);
                (*label, *bytes, b, v)
            })
            .collect();
        // The mildest quantization that fits; else the one that frees the most room.
        let chosen = evaluated
            .iter()
            .find(|(_, _, _, v)| v.fits)
            .or_else(|| evaluated.last());
        if let Some((label, bytes, b, v)) = chosen {
            let weights_now_fit = b.kv_budget_bytes.get() > 0 && v.max_model_len_that_fits > 0;
            let longer = v.max_model_len_that_fits > verdict.max_model_len_that_fits;
            if v.fits || (weights_now_fit && (!original_weights_fit || longer)) {
                let context_note = if v.fits {
                    String::new()
                } else {
                    format!(" with `--max-model-len {}`", v.max_model_len_that_fits)
                };
                list.push(Alternative {
                    kind: "quantization".to_string(),
                    description: format!("{label}: weights ≈ {}{context_note}", Bytes(*bytes)),
                    weights_per_gpu_bytes: b.weights_per_gpu_bytes,
                    max_kv_tokens: v.max_kv_tokens,
                });
            }
        }
    }
    // An 8-bit KV cache.
    if context.kv_num > context.kv_den {
        let fp8_context = BudgetContext {
            kv_num: 1,
            kv_den: 1,
            ..*context
        };
        let (b, v) = evaluate(&fp8_context, options, gpu, weights_bytes, tp, &mut scratch);
        if v.fits {
            list.push(Alternative {
                kind: "kv_cache_dtype".to_string(),
                description: "`--kv-cache-dtype fp8` halves the KV cache".to_string(),
                weights_per_gpu_bytes: b.weights_per_gpu_bytes,
                max_kv_tokens: v.max_kv_tokens,
            });
        }
    }
    // A shorter context.
    let weights_fit = budget
        .weights_per_gpu_bytes
        .get()
        .saturating_add(saturating_sum(
            budget.allowances.iter().map(|a| a.bytes.get()),
        ))
        <= budget.usable_bytes.get();
    if weights_fit && verdict.max_model_len_that_fits > 0 && context.kv_shape.is_some() {
        list.push(Alternative {
            kind: "max_model_len".to_string(),
            description: format!(
                "`--max-model-len {}` (one sequence at a time)",
                verdict.max_model_len_that_fits
            ),
            weights_per_gpu_bytes: budget.weights_per_gpu_bytes,
            max_kv_tokens: verdict.max_kv_tokens,
        });
    }
    list
}
