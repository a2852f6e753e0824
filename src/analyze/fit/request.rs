//! What `oomdoc fit` was asked (each option as given, `None` when not given) and its checks:
//! counts that must be positive, each engine's own options, llama.cpp's refusals, a `--gpu`
//! name that is not one card of the table, the parallel layout against the checkpoint; then
//! the options the analysis runs with. Pure: the command line fills [`FitRequest`], the
//! caller reads the checkpoint and the GPUs. Also the weights lower bound `report` takes from
//! a checkpoint ([`checkpoint_facts`]).

use crate::error::HintedError;
use crate::model::checkpoint::CheckpointFacts;
use crate::model::{cards, Bytes, Source};

use super::{
    check_config, check_parallel, check_pipeline, CacheType, Engine, EngineOptions, FitInput,
    FitOptions, FlashAttn, GpuBudget, KvCacheDtype, LlamaCppOptions, DEFAULT_BATCHED_TOKENS,
};

/// `oomdoc fit`'s options as given.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct FitRequest {
    /// The checkpoint as the user named it (for messages).
    pub path: String,
    /// `--gpu-memory`.
    pub gpu_memory: Option<Bytes>,
    /// `--gpu`: a card class of the table.
    pub gpu: Option<String>,
    /// vLLM `--gpu-memory-utilization`.
    pub gpu_memory_utilization: Option<f64>,
    /// vLLM `--max-model-len`.
    pub max_model_len: Option<u64>,
    /// vLLM `--tensor-parallel-size`.
    pub tensor_parallel_size: Option<u64>,
    /// vLLM `--pipeline-parallel-size`.
    pub pipeline_parallel_size: Option<u64>,
    /// vLLM `--max-num-seqs`.
    pub max_num_seqs: Option<u64>,
    /// vLLM `--max-num-batched-tokens`.
    pub max_num_batched_tokens: Option<u64>,
    /// vLLM `--kv-cache-dtype`.
    pub kv_cache_dtype: Option<KvCacheDtype>,
    /// llama.cpp `--ctx-size`.
    pub ctx_size: Option<u64>,
    /// llama.cpp `--n-gpu-layers`.
    pub n_gpu_layers: Option<u64>,
    /// llama.cpp `--cache-type-k`.
    pub cache_type_k: Option<CacheType>,
    /// llama.cpp `--cache-type-v`.
    pub cache_type_v: Option<CacheType>,
    /// llama.cpp `--batch-size`.
    pub batch_size: Option<u64>,
    /// llama.cpp `--ubatch-size`.
    pub ubatch_size: Option<u64>,
    /// llama.cpp `--flash-attn`.
    pub flash_attn: Option<FlashAttn>,
}

/// An option out of its range (no hint: the message says the range).
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{0}")]
pub struct OutOfRange(String);

/// How the checkpoint is budgeted: the engine, its options, and notes the checks add.
#[derive(Debug, Clone)]
pub struct FitPlan {
    /// The engine that loads it.
    pub engine: Engine,
    /// vLLM's options (defaults filled in); the GPU budget is set by [`FitPlan::options`].
    pub options: FitOptions,
    /// llama.cpp's options and the pipeline stages.
    pub engine_options: EngineOptions,
    /// Notes for the report's limitations.
    pub notes: Vec<String>,
}

impl FitPlan {
    /// The analysis options with the GPU budget.
    pub fn options(&self, gpu: Option<GpuBudget>) -> FitOptions {
        FitOptions {
            gpu,
            ..self.options.clone()
        }
    }
}

impl FitRequest {
    /// Counts that must be positive when given, and a utilization in (0, 1].
    pub fn check_counts(&self) -> Result<(), OutOfRange> {
        if let Some(fraction) = self.gpu_memory_utilization {
            if !(fraction > 0.0 && fraction <= 1.0) {
                return Err(OutOfRange(format!(
                    "`--gpu-memory-utilization` must be in (0, 1], not {fraction}"
                )));
            }
        }
        for (flag, value) in [
            ("--tensor-parallel-size", self.tensor_parallel_size),
            ("--pipeline-parallel-size", self.pipeline_parallel_size),
            ("--max-model-len", self.max_model_len),
            ("--max-num-seqs", self.max_num_seqs),
            ("--max-num-batched-tokens", self.max_num_batched_tokens),
            ("--batch-size", self.batch_size),
            ("--ubatch-size", self.ubatch_size),
        ] {
            if value == Some(0) {
                return Err(OutOfRange(format!("`{flag}` must be at least 1")));
            }
        }
        if self.gpu_memory == Some(Bytes::ZERO) {
            return Err(OutOfRange(
                "`--gpu-memory` must be more than 0 bytes".to_owned(),
            ));
        }
        Ok(())
    }

    /// The engine, its options and the layout checks for this checkpoint.
    pub fn plan(&self, input: &FitInput, gguf: bool) -> Result<FitPlan, HintedError> {
        self.refuse_other_engine_flags(gguf)?;
        let llama = self.llama_options()?;
        let tensor_parallel_size = self.tensor_parallel_size.unwrap_or(1);
        let pipeline_parallel_size = self.pipeline_parallel_size.unwrap_or(1);
        let utilization = self.gpu_memory_utilization.unwrap_or(0.9);
        let engine = if gguf {
            Engine::LlamaCpp
        } else {
            Engine::Vllm {
                gpus: tensor_parallel_size.saturating_mul(pipeline_parallel_size),
                utilization,
            }
        };
        let notes = check_layout(input, gguf, tensor_parallel_size, pipeline_parallel_size)?;
        Ok(FitPlan {
            engine,
            options: FitOptions {
                kv_cache_dtype: self.kv_cache_dtype.unwrap_or(KvCacheDtype::Auto),
                gpu: None,
                gpu_memory_utilization: utilization,
                max_model_len: self.max_model_len,
                tensor_parallel_size,
                max_num_seqs: self.max_num_seqs.unwrap_or(256),
                max_num_batched_tokens: self
                    .max_num_batched_tokens
                    .unwrap_or(DEFAULT_BATCHED_TOKENS),
                cards: cards::CARDS,
            },
            engine_options: EngineOptions {
                llama,
                pipeline_parallel_size,
            },
            notes,
        })
    }

    /// The GPU budget the user gave: `--gpu-memory`, else the `--gpu` card; `None` when the
    /// GPUs must be read.
    pub fn given_budget(&self) -> Result<Option<GpuBudget>, HintedError> {
        if let Some(total) = self.gpu_memory {
            return Ok(Some(GpuBudget {
                name: None,
                total,
                source: Source::User,
                basis: "`--gpu-memory`".to_string(),
            }));
        }
        if let Some(name) = &self.gpu {
            let card = cards::lookup(name).map_err(|error| gpu_name_error(name, error))?;
            return Ok(Some(super::card_budget(card)));
        }
        Ok(None)
    }

    /// Flags that belong to the other engine: vLLM's for a GGUF file, llama.cpp's for a
    /// safetensors checkpoint. Each is refused by name rather than silently ignored.
    fn refuse_other_engine_flags(&self, gguf: bool) -> Result<(), HintedError> {
        let vllm = [
            (
                "--gpu-memory-utilization",
                self.gpu_memory_utilization.is_some(),
            ),
            ("--max-model-len", self.max_model_len.is_some()),
            (
                "--tensor-parallel-size",
                self.tensor_parallel_size.is_some(),
            ),
            (
                "--pipeline-parallel-size",
                self.pipeline_parallel_size.is_some(),
            ),
            ("--max-num-seqs", self.max_num_seqs.is_some()),
            (
                "--max-num-batched-tokens",
                self.max_num_batched_tokens.is_some(),
            ),
            ("--kv-cache-dtype", self.kv_cache_dtype.is_some()),
        ];
        let llama = [
            ("--ctx-size", self.ctx_size.is_some()),
            ("--n-gpu-layers", self.n_gpu_layers.is_some()),
            ("--cache-type-k", self.cache_type_k.is_some()),
            ("--cache-type-v", self.cache_type_v.is_some()),
            ("--batch-size", self.batch_size.is_some()),
            ("--ubatch-size", self.ubatch_size.is_some()),
            ("--flash-attn", self.flash_attn.is_some()),
        ];
        if gguf {
            if let Some((flag, _)) = vllm.iter().find(|(_, given)| *given) {
                return Err(HintedError::new(
                    format!(
                        "`{flag}` is a vLLM option, and `{}` is a GGUF file, budgeted as \
                         llama.cpp loads it",
                        self.path
                    ),
                    "llama.cpp's: `--ctx-size`, `--n-gpu-layers`, `--cache-type-k/-v`, \
                     `--ubatch-size`, `--flash-attn`",
                ));
            }
            return Ok(());
        }
        if let Some((flag, _)) = llama.iter().find(|(_, given)| *given) {
            return Err(HintedError::new(
                format!(
                    "`{flag}` is a llama.cpp option for GGUF files, and `{}` is budgeted as vLLM \
                     loads it",
                    self.path
                ),
                "vLLM's: `--max-model-len`, `--gpu-memory-utilization`, `--tensor-parallel-size`, \
                 `--kv-cache-dtype`",
            ));
        }
        Ok(())
    }

    /// llama.cpp's options, checked as llama.cpp checks them.
    fn llama_options(&self) -> Result<LlamaCppOptions, HintedError> {
        let defaults = LlamaCppOptions::default();
        let options = LlamaCppOptions {
            // `-c 0` is llama.cpp's "the model's context length".
            ctx_size: self.ctx_size.filter(|size| *size > 0),
            n_gpu_layers: self.n_gpu_layers,
            cache_type_k: self.cache_type_k.unwrap_or(defaults.cache_type_k),
            cache_type_v: self.cache_type_v.unwrap_or(defaults.cache_type_v),
            batch_size: self.batch_size.unwrap_or(defaults.batch_size),
            ubatch_size: self.ubatch_size.unwrap_or(defaults.ubatch_size),
            flash_attn: self.flash_attn.unwrap_or(defaults.flash_attn),
        };
        if options.cache_type_v.is_quantized() && options.flash_attn == FlashAttn::Off {
            return Err(HintedError::new(
                format!(
                    "`--cache-type-v {}` with `--flash-attn off`: llama.cpp refuses a quantized \
                     V cache without flash attention",
                    options.cache_type_v.name()
                ),
                "use `--flash-attn on` (or `auto`), or an f16 V cache",
            ));
        }
        Ok(options)
    }
}

/// The weights lower bound of a checkpoint for `oomdoc report --checkpoint`: `oomdoc fit`'s
/// analysis with vLLM's defaults, `path` as the report shows it (redacted).
pub fn checkpoint_facts(input: &FitInput, path: String) -> Result<CheckpointFacts, HintedError> {
    let options = FitOptions {
        kv_cache_dtype: KvCacheDtype::Auto,
        gpu: None,
        gpu_memory_utilization: 0.9,
        max_model_len: None,
        tensor_parallel_size: 1,
        max_num_seqs: 256,
        max_num_batched_tokens: DEFAULT_BATCHED_TOKENS,
        cards: cards::CARDS,
    };
    check_config(input).map_err(|error| {
        HintedError::new(
            format!("the checkpoint's config is not a real model: {error}"),
            "check `config.json` (or the GGUF metadata) of this checkpoint",
        )
    })?;
    let report = super::analyze(input, &options);
    Ok(CheckpointFacts {
        path: Some(path),
        format: Some(report.kind.as_str().to_owned()),
        weights_total_bytes: Some(report.weights.total_bytes.get()),
        by_dtype: report
            .weights
            .by_dtype
            .iter()
            .map(|(dtype, bytes)| (dtype.clone(), bytes.get()))
            .collect(),
        parameters: Some(report.parameters),
        source: "checkpoint headers (`oomdoc fit`)".to_owned(),
    })
}

/// The usage error for a `--gpu` name that is not exactly one card of the table.
fn gpu_name_error(name: &str, error: cards::LookupError) -> HintedError {
    let list = |cards: &[&cards::Card]| {
        cards
            .iter()
            .map(|card| format!("\n  {}", card.describe()))
            .collect::<String>()
    };
    let other = "or give the memory itself with `--gpu-memory SIZE`";
    match error {
        cards::LookupError::Ambiguous(candidates) => {
            let first = candidates.first().map_or("", |card| card.key);
            HintedError::new(
                format!(
                    "`--gpu {name}` could mean {} GPU classes of different memory:{}",
                    candidates.len(),
                    list(&candidates)
                ),
                format!(
                    "name one, e.g. `--gpu {first}` (PCIe and SXM have the same memory), or give \
                     `--gpu-memory SIZE`"
                ),
            )
        }
        cards::LookupError::NoSuchMemory { memory_gb, family } => HintedError::new(
            format!(
                "`--gpu {name}`: oomdoc's table has no {memory_gb} GB version of this GPU; it has:{}",
                list(&family)
            ),
            format!("name one of these, {other}"),
        ),
        cards::LookupError::Unknown { near } if !near.is_empty() => HintedError::new(
            format!(
                "unknown GPU class `{name}`; similar names in oomdoc's table:{}",
                list(&near)
            ),
            format!("a similar name is another card, not a spelling: check the memory, {other}"),
        ),
        cards::LookupError::Unknown { .. } => HintedError::new(
            format!("unknown GPU class `{name}`"),
            format!("use one of {}, {other}", cards::keys().join(", ")),
        ),
    }
}

/// The checkpoint's config against the parallel layout asked for: a config that is not a
/// real model, a `--tensor-parallel-size` that does not divide the heads, more pipeline stages
/// than layers. Returns the notes the pipeline check adds.
fn check_layout(
    input: &FitInput,
    gguf: bool,
    tensor_parallel_size: u64,
    pipeline_parallel_size: u64,
) -> Result<Vec<String>, HintedError> {
    check_config(input).map_err(|error| {
        HintedError::new(
            format!("the checkpoint's config is not a real model: {error}"),
            if gguf {
                "check the GGUF metadata of this file"
            } else {
                "check `config.json` of this checkpoint"
            },
        )
    })?;
    if gguf {
        return Ok(Vec::new());
    }
    check_parallel(input, tensor_parallel_size).map_err(|error| {
        let divisors = error.divisors();
        HintedError::new(
            error.to_string(),
            format!(
                "use a `--tensor-parallel-size` that divides {}: {}",
                error.heads,
                divisors
                    .iter()
                    .map(u64::to_string)
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        )
    })?;
    let note = check_pipeline(input, pipeline_parallel_size).map_err(|error| {
        HintedError::new(
            error.to_string(),
            format!(
                "use a `--pipeline-parallel-size` of at most {}",
                error.layers
            ),
        )
    })?;
    Ok(note.into_iter().collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_must_be_positive_and_utilization_a_fraction() {
        let request = FitRequest {
            max_num_seqs: Some(0),
            ..FitRequest::default()
        };
        assert_eq!(
            request.check_counts().unwrap_err().to_string(),
            "`--max-num-seqs` must be at least 1"
        );
        let request = FitRequest {
            gpu_memory_utilization: Some(1.5),
            ..FitRequest::default()
        };
        assert!(request
            .check_counts()
            .unwrap_err()
            .to_string()
            .contains("(0, 1], not 1.5"));
        assert_eq!(FitRequest::default().check_counts(), Ok(()));
    }

    #[test]
    fn the_given_budget_is_the_memory_else_the_card() {
        let request = FitRequest {
            gpu_memory: Some(Bytes(80 << 30)),
            ..FitRequest::default()
        };
        let budget = request.given_budget().unwrap().unwrap();
        assert_eq!(budget.total, Bytes(80 << 30));
        assert_eq!(budget.source, Source::User);
        let request = FitRequest {
            gpu: Some("h200".to_owned()),
            ..FitRequest::default()
        };
        assert!(request.given_budget().unwrap().is_some());
        let request = FitRequest {
            gpu: Some("a100".to_owned()),
            ..FitRequest::default()
        };
        assert!(request
            .given_budget()
            .unwrap_err()
            .message
            .contains("could mean"));
        assert_eq!(FitRequest::default().given_budget().unwrap(), None);
    }

    #[test]
    fn a_quantized_v_cache_without_flash_attention_is_refused() {
        let request = FitRequest {
            cache_type_v: Some(CacheType::Q8_0),
            flash_attn: Some(FlashAttn::Off),
            ..FitRequest::default()
        };
        assert!(request
            .llama_options()
            .unwrap_err()
            .message
            .contains("refuses a quantized V cache"));
        let options = FitRequest::default().llama_options().unwrap();
        assert_eq!(options, LlamaCppOptions::default());
    }

    #[test]
    fn the_other_engines_flags_are_refused_by_name() {
        let request = FitRequest {
            path: "m.gguf".to_owned(),
            max_model_len: Some(4096),
            ..FitRequest::default()
        };
        let error = request.refuse_other_engine_flags(true).unwrap_err();
        assert!(error
            .message
            .starts_with("`--max-model-len` is a vLLM option"));
        assert!(request.refuse_other_engine_flags(false).is_ok());
        let request = FitRequest {
            path: "m".to_owned(),
            ctx_size: Some(4096),
            ..FitRequest::default()
        };
        let error = request.refuse_other_engine_flags(false).unwrap_err();
        assert!(error
            .message
            .starts_with("`--ctx-size` is a llama.cpp option"));
    }
}
