//! The frame rules of checkpoint conversions and quantizers run as their own job: the weights
//! are rewritten into another format, not loaded to serve or train.
//! `rules.rs` orders the segments into one table (the first rule that matches applies).

use super::r;
use crate::analyze::phase::FrameRule;
use crate::analyze::phase::Role::Stage;
use crate::model::explain::Phase::FormatConversion as F;

/// A segment of the frame table (its place in the order: `rules.rs` `SEGMENTS`). Stage frames:
/// the calibration forwards a quantizer runs below them belong to the conversion.
pub(super) const CONVERSIONS: &[FrameRule] = &[
    // --- llama.cpp `convert_hf_to_gguf.py` (mid-2024 on; `convert-hf-to-gguf.py` before):
    // every function of the script (`ModelBase.write` → `prepare_tensors` → `modify_tensors`,
    // `write_tensors` in older ones) converts the checkpoint's tensors to GGUF. ---
    r("", "convert_hf_to_gguf.py", F, Stage, "llamacpp"),
    r("", "convert-hf-to-gguf.py", F, Stage, "llamacpp"),
    // --- mergekit 0.x (`mergekit/merge.py` `run_merge` → `graph.py` `Executor.run` → the
    // method's task, `merge_methods/*.py` `execute`: task arithmetic, TIES, DARE, DELLA, SLERP
    // combine the models' tensors into one checkpoint; arcee-ai/mergekit#420, session 52). ---
    r("run_merge", "mergekit/", F, Stage, "mergekit"),
    r("", "mergekit/merge_methods/", F, Stage, "mergekit"),
    // --- AutoGPTQ 0.x `auto_gptq/modeling/_base.py` `BaseGPTQForCausalLM.quantize` and
    // `quantization/gptq.py` `GPTQ.fasterquant`; GPTQModel 1.x–4.x `gptqmodel/models/base.py`
    // `BaseGPTQModel.quantize`; AutoAWQ 0.x `awq/models/base.py` `BaseAWQForCausalLM.quantize`
    // and `awq/quantize/quantizer.py` `AwqQuantizer.quantize`; llm-compressor 0.x `oneshot`
    // (`llmcompressor/transformers/finetune/text_generation.py`, later
    // `llmcompressor/entrypoints/oneshot.py`). ---
    r("quantize", "auto_gptq/", F, Stage, "auto-gptq"),
    r("fasterquant", "auto_gptq/", F, Stage, "auto-gptq"),
    r("quantize", "gptqmodel/", F, Stage, "gptqmodel"),
    r("quantize", "awq/models/", F, Stage, "autoawq"),
    r("quantize", "awq/quantize/", F, Stage, "autoawq"),
    r("oneshot", "llmcompressor/", F, Stage, "llm-compressor"),
    // --- Intel AutoRound 0.5–0.9 `auto_round/compressors/base.py` (earlier
    // `auto_round/autoround.py`) `quantize` → `_quantize_blocks` / `try_cache_inter_data_gpucpu`
    // (the blocks' calibration inputs cached, the model dispatched for it): every function of
    // its compressors quantizes. ---
    r("", "auto_round/compressors/", F, Stage, "auto-round"),
    r("quantize", "auto_round/", F, Stage, "auto-round"),
    // --- Microsoft Olive 0.x `olive/engine/engine.py` `_run_pass` → `olive/systems/local.py`
    // `run_pass`: one pass of a workflow (conversion, quantization, graph optimisation) turning
    // the model into another; an ONNX Runtime session a pass runs for calibration is its. ---
    r("_run_pass", "olive/", F, Stage, "olive"),
    r("run_pass", "olive/", F, Stage, "olive"),
    // --- ExLlamaV2 0.x `convert.py` → `exllamav2/conversion/` (`measure.py` `measure_quant`,
    // `quantize.py` `quant`, `optimize.py`, `compile.py`): measuring and quantizing to EXL2. ---
    r("", "exllamav2/conversion/", F, Stage, "exllamav2"),
    // --- PEFT 0.x `tuners/tuners_utils.py` / `tuners/lora/model.py` `merge_and_unload` (a
    // bare rule in `hf.rs`) → `_unload_and_optionally_merge`: the adapters are merged into the
    // base weights. ---
    r("_unload_and_optionally_merge", "peft/", F, Stage, "peft"),
    // --- Unsloth 2024.x–2025.x `unsloth/save.py`: every function of it merges the LoRA
    // adapters into 16-bit weights (`unsloth_save_model` → `_merge_lora`) and writes them,
    // or converts them on to GGUF (`save_to_gguf`); the model's methods it patches in
    // (`model.save_pretrained_merged`, `push_to_hub_merged`, `save_pretrained_gguf`,
    // `push_to_hub_gguf`) are its entry points, named so by no other library. ---
    r("", "unsloth/save.py", F, Stage, "unsloth"),
    r("save_pretrained_merged", "", F, Stage, "unsloth"),
    r("push_to_hub_merged", "", F, Stage, "unsloth"),
    r("save_pretrained_gguf", "", F, Stage, "unsloth"),
    r("push_to_hub_gguf", "", F, Stage, "unsloth"),
    // --- ONNX export: torch 1.x–2.x `torch/onnx/utils.py` `export` → `_export` (traces the
    // model and writes the graph; `torch/onnx/__init__.py` `export` wraps it), optimum 1.x
    // `optimum/exporters/onnx/convert.py` `export_pytorch`; MLC-LLM 0.1x
    // `mlc_llm/interface/convert_weight.py` `convert_weight`. ---
    r("export", "torch/onnx/", F, Stage, "torch"),
    r("_export", "torch/onnx/", F, Stage, "torch"),
    r("export_pytorch", "optimum/exporters/", F, Stage, "optimum"),
    r("convert_weight", "mlc_llm/", F, Stage, "mlc_llm"),
];
