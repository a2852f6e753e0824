//! The vLLM budget on one GPU: the allowances (activations, CUDA context, graphs, NCCL) and
//! the verdict of weights and KV cache against `total · gpu_memory_utilization`.

use super::*;

pub(super) fn allowances(
    context: &BudgetContext<'_>,
    options: &FitOptions,
    tensor_parallel: u64,
) -> Vec<Allowance> {
    let distributed = tensor_parallel > 1 || context.pipeline > 1;
    let mut list = vec![Allowance {
        name: "non_torch".to_string(),
        bytes: Bytes(CUDA_CONTEXT_BYTES + if distributed { NCCL_BYTES } else { 0 }),
        source: Source::Assumption,
        basis: if distributed {
            format!("{CUDA_CONTEXT_BASIS} + NCCL buffers 256 MiB assumed (4 MiB NCCL_BUFFSIZE × 32 channels × 2)")
        } else {
            format!("{CUDA_CONTEXT_BASIS}; cuBLAS workspaces come on top")
        },
    }];
    let hidden = context.model.hidden_size.unwrap_or(0);
    let intermediate = context
        .model
        .intermediate_size
        .unwrap_or(hidden.saturating_mul(4))
        / tensor_parallel.max(1);
    let vocab = context.model.vocab_size.unwrap_or(0);
    let tokens = options.max_num_batched_tokens;
    let activation = tokens
        .saturating_mul(
            hidden
                .saturating_mul(4)
                .saturating_add(intermediate.saturating_mul(2)),
        )
        .saturating_mul(2)
        .saturating_add(options.max_num_seqs.saturating_mul(vocab).saturating_mul(4));
    list.push(Allowance {
        name: "activation_peak".to_string(),
        bytes: Bytes(activation),
        source: Source::Assumption,
        basis: format!(
            "estimate of vLLM's profiling peak: {tokens} batched tokens × (4 × hidden {hidden} + 2 × intermediate {intermediate}) × 2 B + {} sequences × vocab {vocab} × 4 B logits",
            options.max_num_seqs
        ),
    });
    list.push(Allowance {
        name: "cuda_graphs".to_string(),
        bytes: Bytes(CUDA_GRAPH_BYTES),
        source: Source::Assumption,
        basis: "assumed: vLLM logs `Graph capturing finished … took 0.3–1.5 GiB` for 7B–70B models; 0 with `--enforce-eager`".to_string(),
    });
    list
}

pub(super) fn evaluate(
    context: &BudgetContext<'_>,
    options: &FitOptions,
    gpu: &GpuBudget,
    weights_bytes: u64,
    tensor_parallel: u64,
    limitations: &mut Vec<String>,
) -> (Budget, FitVerdict) {
    let tp = tensor_parallel.max(1);
    let usable = (gpu.total.get() as f64 * options.gpu_memory_utilization).floor() as u64;
    let replicated = context.replicated_bytes.min(weights_bytes);
    let weights_per_gpu = replicated.saturating_add((weights_bytes - replicated).div_ceil(tp));
    let allowances = allowances(context, options, tp);
    // Saturating: a sum that wrapped said "fits" for a vocabulary of 2^60 (issue 14).
    let allowance_total = saturating_sum(allowances.iter().map(|a| a.bytes.get()));
    let needed_before_kv = weights_per_gpu.saturating_add(allowance_total);
    let kv_budget = usable.saturating_sub(needed_before_kv);
    let model_max = context.model.max_position_embeddings;
    let (max_model_len, max_model_len_source) = match (options.max_model_len, model_max) {
        (Some(len), Some(model_len)) if len > model_len => {
            limitations.push(format!(
                "`--max-model-len` {len} is above the model's context length {model_len}: vLLM refuses it unless `VLLM_ALLOW_LONG_MAX_MODEL_LEN=1`"
            ));
            (len, Source::User)
        }
        (Some(len), _) => (len, Source::User),
        (None, Some(len)) => (len, Source::Checkpoint),
        (None, None) => {
            limitations.push(
                "the context length is not in the config: `max_model_len` 4096 assumed".to_string(),
            );
            (4096, Source::Assumption)
        }
    };
    let rate = context
        .kv_shape
        .map(|shape| {
            // vLLM budgets a sliding-window layer for min(window − 1 + max_num_batched_tokens,
            // max_model_len) tokens per request (`SlidingWindowSpec.max_memory_usage_bytes`):
            // a prefill chunk attends over the window before it.
            let mut rate = rate(shape, tp, context.kv_num, context.kv_den);
            rate.window = rate.window.map(|window| {
                window
                    .saturating_sub(1)
                    .saturating_add(options.max_num_batched_tokens)
            });
            rate
        })
        .unwrap_or_default();
    let per_sequence = rate.per_sequence(max_model_len);
    let per_token = rate.full_per_token.saturating_add(rate.sliding_per_token);
    let max_kv_tokens = if per_sequence == 0 {
        0
    } else {
        u64::try_from((kv_budget as u128 * max_model_len as u128) / per_sequence as u128)
            .unwrap_or(u64::MAX)
    };
    let max_concurrency = if per_sequence == 0 {
        0.0
    } else {
        kv_budget as f64 / per_sequence as f64
    };
    let cap = model_max.unwrap_or(u64::MAX).max(max_model_len);
    let longest = if per_sequence == 0 {
        0
    } else {
        rate.longest_fitting(kv_budget, cap)
    };
    let weights_fit = needed_before_kv <= usable;
    let fits = weights_fit && per_sequence > 0 && per_sequence <= kv_budget;
    let shortfall = if fits {
        0
    } else {
        needed_before_kv
            .saturating_add(per_sequence)
            .saturating_sub(usable)
    };
    let summary = if context.kv_shape.is_none() {
        if weights_fit {
            "the weights fit, but the KV cache could not be sized (see limitations)".to_string()
        } else {
            format!(
                "does not fit: the weights and allowances alone need {} more",
                Bytes(needed_before_kv - usable)
            )
        }
    } else if fits {
        format!(
            "fits: {} KV tokens per GPU, {:.2} sequences of {max_model_len} tokens at once",
            max_kv_tokens,
            (max_concurrency * 100.0).floor() / 100.0
        )
    } else if !weights_fit {
        format!(
            "does not fit: weights {} + allowances {} exceed the usable {} by {}",
            Bytes(weights_per_gpu),
            Bytes(allowance_total),
            Bytes(usable),
            Bytes(needed_before_kv - usable)
        )
    } else {
        format!(
            "does not fit: one sequence of {max_model_len} tokens needs {} of KV cache but {} is left; the longest that fits is {longest} tokens",
            Bytes(per_sequence),
            Bytes(kv_budget)
        )
    };
    let budget = Budget {
        gpu: gpu.name.clone(),
        gpu_total_bytes: gpu.total,
        gpu_total_source: gpu.source,
        gpu_total_basis: gpu.basis.clone(),
        gpu_memory_utilization: options.gpu_memory_utilization,
        usable_bytes: Bytes(usable),
        tensor_parallel_size: tp,
        weights_per_gpu_bytes: Bytes(weights_per_gpu),
        replicated: if tp > 1 {
            let kv = if context.kv_shape.is_some_and(|s| s.mla) {
                "the MLA latent KV cache is replicated on every rank"
            } else {
                "KV heads are split across ranks (replicated when fewer KV heads than ranks)"
            };
            format!(
                "1-D tensors (norms, biases: {}) are replicated on every rank; matrices and embeddings are split by {tp}; {kv}",
                Bytes(replicated)
            )
        } else {
            "single GPU: nothing is split".to_string()
        },
        allowances,
        kv_budget_bytes: Bytes(kv_budget),
        max_model_len,
        max_model_len_source,
        max_num_seqs: options.max_num_seqs,
        pipeline_parallel_size: 1,
        engine: "vllm".to_string(),
        llama_cpp: None,
    };
    let verdict = FitVerdict {
        fits,
        max_kv_tokens,
        kv_bytes_per_token_per_gpu: Bytes(per_token),
        kv_bytes_per_sequence: Bytes(per_sequence),
        max_concurrency: (max_concurrency * 100.0).floor() / 100.0,
        max_model_len_that_fits: longest,
        shortfall_bytes: Bytes(shortfall),
        summary,
    };
    (budget, verdict)
}

/// The budget of a card from the table.
pub fn card_budget(card: &Card) -> GpuBudget {
    GpuBudget {
        name: Some(card.name.to_string()),
        total: card.total_bytes,
        source: Source::Assumption,
        basis: format!("oomdoc card table: {}", card.source),
    }
}
