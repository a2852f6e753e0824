//! Session 51: the stages the first reading of the session's blind batches missed (MLC-LLM's
//! budget at engine creation, vLLM 0.1–0.2's worker set-up, LMDeploy's tensor-parallel build,
//! the web UIs' generation entries, Forge's models, generative-models' demo sampling, old
//! ultralytics' loss and EveryDream2's training step, and the reporter's words of this round).

use super::s42_tests::{phase_of, MESSAGE};
use crate::analyze::explain::explain_text;
use crate::model::explain::Phase;

fn phase(text: &str) -> Phase {
    explain_text(text).phase.failed_in
}

#[test]
fn mlc_llms_budget_is_its_start_or_its_kv_cache() {
    let cpp = "TVMError: Check failed: (output_res.IsOk()) is false: Insufficient GPU memory \
               error: The available single GPU memory is 4762.535 MB, which is less than the sum \
               of model weight size (4958.468 MB) and temporary buffer size (609.312 MB).\n";
    assert_eq!(phase(cpp), Phase::Startup);
    let python = "  File \"/x/mlc_llm/serve/engine.py\", line 228, in \
                  _estimate_max_total_sequence_length\n    assert max_total_sequence_length > \
                  0, (\nAssertionError: Cannot estimate KV cache capacity. The model weight \
                  size 11219714048.0 may be larger than GPU memory size 25447170048\n";
    assert_eq!(phase(python), Phase::KvCacheAlloc);
}

fn traceback(frames: &[(&str, &str)]) -> String {
    let mut text = String::from("Traceback (most recent call last):\n");
    for (file, function) in frames {
        text.push_str(&format!(
            "  File \"{file}\", line 10, in {function}\n    x = f()\n"
        ));
    }
    text.push_str(MESSAGE);
    text.push('\n');
    text
}

#[test]
fn frames_of_this_round_name_their_stage() {
    let cases: &[(&[(&str, &str)], Phase)] = &[
        (
            &[
                ("/home/u/test-vllm.py", "<module>"),
                ("/x/vllm/entrypoints/llm.py", "__init__"),
                ("/x/vllm/engine/llm_engine.py", "__init__"),
                ("/x/vllm/engine/llm_engine.py", "_init_workers"),
            ],
            Phase::Startup,
        ),
        (
            &[
                (
                    "/x/lmdeploy/pytorch/engine/model_agent.py",
                    "_tp_build_model",
                ),
                ("/x/lmdeploy/pytorch/engine/model_agent.py", "_dist_model"),
            ],
            Phase::WeightsLoad,
        ),
        (
            &[
                ("C:\\sd\\modules\\call_queue.py", "f"),
                (
                    "C:\\sd\\repositories\\ldm\\models\\diffusion\\ddpm.py",
                    "apply_model",
                ),
                ("C:\\sd\\modules\\sd_unet.py", "UNetModel_forward"),
            ],
            Phase::Inference,
        ),
        (&[("/sd/modules/txt2img.py", "txt2img")], Phase::Inference),
        (
            &[
                ("/forge/backend/nn/flux.py", "forward"),
                ("/forge/backend/nn/flux.py", "attention"),
            ],
            Phase::Inference,
        ),
        (
            &[
                ("/sgm/scripts/demo/video_sampling.py", "<module>"),
                ("/sgm/scripts/demo/streamlit_helpers.py", "do_sample"),
            ],
            Phase::Inference,
        ),
        (
            &[
                ("/x/exllamav3/model/model_tp_fn.py", "mp_model_worker"),
                ("/x/exllamav3/model/model_tp_fn.py", "mp_model_forward"),
            ],
            Phase::Inference,
        ),
        (
            &[
                ("/content/train.py", "main"),
                (
                    "/x/ultralytics/yolo/utils/tal.py",
                    "select_candidates_in_gts",
                ),
            ],
            Phase::TrainingStep,
        ),
        (
            &[
                ("/ed2/train.py", "main"),
                ("/ed2/train.py", "get_model_prediction_and_target"),
            ],
            Phase::TrainingStep,
        ),
    ];
    for (frames, want) in cases {
        let text = traceback(frames);
        assert_eq!(phase(&text), *want, "{text}");
    }
}

#[test]
fn the_reporters_words_of_this_round_name_their_stage() {
    let cases = [
        (
            "# Fail to train Qwen-3b with long context GRPO with 48GB VRAM.",
            Phase::TrainingStep,
        ),
        (
            "it runs into OOM during Megatron Actor Updating.",
            Phase::TrainingStep,
        ),
        (
            "The OOM was at the start of Epoch 1 after model was init-ed.",
            Phase::TrainingStep,
        ),
        (
            "it can successfully run one gradient update step, while returns with OOM after it",
            Phase::TrainingStep,
        ),
        (
            "It gives me a CUDA OOM error at loading using VLLM.",
            Phase::WeightsLoad,
        ),
        ("# OOM at the time of evaluation", Phase::Inference),
        (
            "It all goes smoothly until validation, where there's a huge memory usage spike.",
            Phase::Inference,
        ),
        ("OOM occurs before the server is started.", Phase::Startup),
        (
            "It fails when I create images above 600px on this card.",
            Phase::Inference,
        ),
        (
            "when i try to use text to video i have a problem with out of mem",
            Phase::Inference,
        ),
        (
            "Only runs into the issue with image input.",
            Phase::Inference,
        ),
    ];
    for (words, want) in cases {
        assert_eq!(phase_of(words), want, "{words}");
    }
}

#[test]
fn advice_and_a_trainings_context_length_name_no_other_stage() {
    // Another person's imperative is advice, not the reporter's training.
    assert_ne!(
        phase_of("@IConquer96 Try to train with smaller image sizes."),
        Phase::TrainingStep
    );
    // A training's long context is its sequence length, not requests served.
    assert_ne!(
        phase_of("I fine-tuned it with long context and it failed."),
        Phase::Inference
    );
    // Served requests keep theirs.
    assert_eq!(
        phase_of("The server OOMs with long context requests."),
        Phase::Inference
    );
}

#[test]
fn round_four_words_name_their_stage() {
    let cases = [
        (
            "at iter 15000 I get out of memory message",
            Phase::TrainingStep,
        ),
        (
            "it runs for exactly 5024 iterations and stops with an out of memory error",
            Phase::TrainingStep,
        ),
        (
            "when I quantize model to be dtype of INT 8 I encountered OOM error on RTX4090",
            Phase::FormatConversion,
        ),
    ];
    for (words, want) in cases {
        assert_eq!(phase_of(words), want, "{words}");
    }
    // What a model does is not a run's course (`a model trained for 300 epochs`), nor is a
    // run asked for (`I run for 300 iterations`).
    assert_ne!(
        phase_of("I run for 300 iterations and it fails"),
        Phase::TrainingStep
    );
}
