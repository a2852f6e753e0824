//! Session 55: the stages the first reading of the session's blind batches missed (ComfyUI's
//! nodes named at a host-memory failure, a quantizer's bar inside a loader's frames, vLLM's draft
//! model's load).

use super::s42_tests::MESSAGE;
use crate::analyze::explain::explain_text;
use crate::model::explain::Phase;

fn phase(text: &str) -> Phase {
    explain_text(text).phase.failed_in
}

#[test]
fn a_comfyui_node_named_at_a_host_memory_failure_ran_when_it_failed() {
    // The host's memory exhausted by a node: the node's name says what ran, as for the GPU's.
    let host = "[enforce fail at alloc_cpu.cpp:80] data. DefaultCPUAllocator: not enough memory: \
                you tried to allocate 103079215104 bytes.";
    let text = format!("Error occurred when executing LayerMask: BiRefNetUltra:\n\n{host}\n");
    assert_eq!(phase(&text), Phase::Inference);
    let loader = format!("Error occurred when executing CheckpointLoaderSimple:\n\n{host}\n");
    assert_eq!(phase(&loader), Phase::WeightsLoad);
    // A node that applies no model says nothing of the stage.
    let save = format!("Error occurred when executing SaveAnimatedWEBP:\n\n{host}\n");
    assert_eq!(phase(&save), Phase::Unknown);
    // Nor does the same node under a GPU message change its reading.
    let gpu = format!("Error occurred when executing Florence2Run:\n\n{MESSAGE}\n");
    assert_eq!(phase(&gpu), Phase::Inference);
}

#[test]
fn a_quantizers_bar_above_a_loaders_traceback_is_the_conversion() {
    let frames = "  File \"/app/src/llmtuner/train/tuner.py\", line 57, in export_model\n    \
        model = load_model(tokenizer, model_args, finetuning_args)\n  \
        File \"/app/src/llmtuner/model/loader.py\", line 128, in load_model\n    \
        model = AutoModelForCausalLM.from_pretrained(**init_kwargs)\n";
    let text = format!(
        "Quantizing model.layers blocks :  46%|████▎     | 37/80 [38:12<44:24, 61.96s/it]\n\
         Traceback (most recent call last):\n{frames}{MESSAGE}\n"
    );
    assert_eq!(phase(&text), Phase::FormatConversion);
    // A conversion's command pasted well before the run is not the bar the exception broke.
    let command = format!(
        "python3 convert_checkpoint.py --model_dir llama/7b/ --dtype float16\n\
         [TensorRT-LLM] TensorRT-LLM version: 0.9.0\n0.9.0\nsome output\nmore output\n\
         Traceback (most recent call last):\n{frames}{MESSAGE}\n"
    );
    assert_eq!(phase(&command), Phase::WeightsLoad);
}

#[test]
fn vllms_draft_model_load_is_the_weights_load() {
    let text = "18:03:00  (Worker_TP0) INFO [gpu_model_runner.py:5332] Loading drafter model...\n\
                18:03:03  kernel: NVRM: nvCheckOkFailedNoLog: Check failed: Out of memory \
                [NV_ERR_NO_MEMORY]\n";
    assert_eq!(phase(text), Phase::WeightsLoad);
}
