//! Session 42: the stages and failures the first reading of five blind batches missed (an OOM
//! named in a title after a model's name with a dot, `But it OOM` under an engine's command, an
//! inference tried or done, a script told with `use` after a training that ran before it,
//! `detect.py` / `render.py`, an RL trainer's rollout and weight sync, `训练时正常` read as a
//! stage that went well, Korean `임베딩을`).

use crate::analyze::explain::explain_text;
use crate::model::explain::Phase;

pub(super) const MESSAGE: &str =
    "RuntimeError: CUDA out of memory. Tried to allocate 2.32 GiB (GPU 0; 10.92 \
GiB total capacity; 8.45 GiB already allocated; 1.80 GiB free; 8.48 GiB reserved in total by \
PyTorch)\n";

/// The stage read from the reporter's words above a PyTorch message (shared with later
/// sessions' tests).
pub(super) fn phase_of(words: &str) -> Phase {
    explain_text(&format!("{words}\n\n{MESSAGE}"))
        .phase
        .failed_in
}

#[test]
fn a_title_with_a_models_dotted_name_and_a_lower_case_oom_is_a_report() {
    let text = "# [Bug]: qwen2.5-vl-72b oom in 4 A100 in 0.8.3\n\n  File \"/x/vllm/v1/worker/\
                gpu_model_runner.py\", line 1619, in capture_model\n    self._dummy_run(n)\n";
    let report = explain_text(text);
    assert!(report.is_gpu_oom, "{report:#?}");
    assert_eq!(report.phase.failed_in, Phase::CudaGraphCapture);
    // A pool of the program's own (an identifier) is still the program's message.
    let pool = "the alloc_req_slots runs out of memory in sglang\n";
    assert!(!explain_text(pool).is_gpu_oom);
    // Advice is no report.
    let advice = "To avoid oom in training, lower the batch size on the A100.\n";
    assert!(!explain_text(advice).is_gpu_oom);
}

#[test]
fn an_oom_named_under_an_engines_command_is_the_gpus() {
    let text = "I ran\n```\ntrtllm-bench -m deepseek-ai/DeepSeek-R1 throughput --backend pytorch \
                --tp 8\n```\n\nBut it OOM, how should I adjust parameters for this case?\n";
    assert!(explain_text(text).is_gpu_oom);
    // With the host's kill just above it, it is not the GPU's.
    let killed = "I run Llama 3.1 8b in Ollama 0.3.4 on the CPU.\n\nError: llama runner process \
                  has terminated: signal: killed\n\nSo I think it's running out of memory.\n";
    assert!(!explain_text(killed).is_gpu_oom);
    // A machine's specification is not the host's memory failing.
    let specs = "Ollama 0.1.47 with gemma2.\n- RAM: 40GB\n- SWAP: 25GB\n\nBut it OOM when loading \
                 the model.\n";
    assert!(explain_text(specs).is_gpu_oom);
}

#[test]
fn an_inference_tried_or_done_names_the_stage() {
    for words in [
        "\"RuntimeError: CUDA out of memory\" when attempting inference",
        "I ran across a problem when trying to use inference with this model:",
        "OOM when performing inference on a video",
        "I get this error when I try inference with batch 4",
    ] {
        assert_eq!(phase_of(words), Phase::Inference, "{words}");
    }
    // A server of that name is the job, not the stage.
    assert_eq!(
        phase_of("OOM when I try the inference server"),
        Phase::Unknown
    );
}

#[test]
fn a_script_told_with_use_or_after_a_finished_run_names_the_stage() {
    assert_eq!(
        phase_of("I got this problem when I use detect.py on my images"),
        Phase::Inference
    );
    assert_eq!(
        phase_of("i ran render.py, but i meet cuda memory error"),
        Phase::Inference
    );
    assert_eq!(
        phase_of("When I run file detect.py. An error appears:"),
        Phase::Inference
    );
    // A training script told is not a model run.
    assert_eq!(
        phase_of("when I use train.py I get this error"),
        Phase::Unknown
    );
}

#[test]
fn an_rl_trainers_rollout_and_weight_sync_name_their_stages() {
    assert_eq!(
        phase_of("CUDA OOM happens when actor model is rolling out in GRPO"),
        Phase::Inference
    );
    assert_eq!(phase_of("OOM during rollout"), Phase::Inference);
    assert_eq!(phase_of("# OOM during weight sync"), Phase::WeightsLoad);
    // A rollout that ended before the failure names no stage of its own.
    assert_ne!(
        phase_of("the error appears right after the rollout stage is done"),
        Phase::Inference
    );
}

#[test]
fn a_chinese_stage_that_went_normally_gives_way_to_the_failing_one() {
    assert_eq!(phase_of("训练时正常，测试时显存不够"), Phase::Inference);
    assert_eq!(
        phase_of("训练时正常，Evaluate时，说GPU 0的显存不够"),
        Phase::Inference
    );
    // A start that went normally before the failure is the training's course.
    assert_eq!(
        phase_of("训练模型 刚开始正常 两三秒之后就报错"),
        Phase::TrainingStep
    );
    // 不正常 (abnormal) is no success.
    assert_eq!(phase_of("训练时不正常，显存不够"), Phase::TrainingStep);
}

#[test]
fn korean_embedding_tried_is_a_model_applied() {
    assert_eq!(
        phase_of("3000개 문장 리스트에 대해 임베딩을 시도하면 OOM 문제가 발생합니다"),
        Phase::Inference
    );
}
