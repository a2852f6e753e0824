//! Session 43: the stages and failures the first reading of ten blind batches missed (a stage
//! the reporter turned to, a model's verb told in the past, media made, a server under load, a
//! quantizer's calibration and packing and its log lines, a script's comment headings, a model
//! queried, a `but` that ends a guard's clause, a Korean training that completed, the shell's
//! Chinese `已杀死` in a code span, Intel's XPU wording, nvdiffrast's status, a lower-case `oom`
//! after `的`, and a raw CUDA error told in a sentence above the message).

use super::s42_tests::{phase_of, MESSAGE};
use crate::analyze::explain::explain_text;
use crate::model::explain::Phase;

#[test]
fn a_stage_turned_to_told_in_the_past_or_made_is_the_stage() {
    for words in [
        "Unfortunately when I went to inference, GPU0 went OOM.",
        "When I went to generate, it OOMed",
        "when I evaluated the trained model on the benchmark, I got this error",
        "When I generated a 1024x1024 image it ran out of memory",
        "error while trying to create an image",
        "when I try to make a video it crashes with OOM",
        "When I render a video, I get out of memory",
        "Under heavy load, the server crashes with OOM",
        "when I query it more than 4 or so times it tries to allocate more memory and runs out",
        "My PC GPU doesn't have enough memory, but when I query it more than 4 times it runs out",
    ] {
        assert_eq!(phase_of(words), Phase::Inference, "{words}");
    }
    assert_eq!(
        phase_of("When I went to train the LoRA it ran out of memory"),
        Phase::TrainingStep
    );
    // Made things that are no media, a past with no failure, and a guard in the hit's own
    // clause say nothing.
    for words in [
        "when I was creating a new model it failed",
        "I made a video of the OOM",
        "when making a dataset the OOM came",
        "We evaluated the model last year.",
        "It works, but if you query it more than 4 times it runs out",
    ] {
        assert_eq!(phase_of(words), Phase::Unknown, "{words}");
    }
}

#[test]
fn a_quantizers_calibration_packing_and_log_lines_are_the_conversion() {
    for words in [
        "# [Bug] CUDA OOM during calibration even with 5x 4090s?",
        "OOM when calibrating the model",
        "oom-kill when packing model.layers",
    ] {
        assert_eq!(phase_of(words), Phase::FormatConversion, "{words}");
    }
    for line in [
        "2025-07-12T21:26:52.653798Z  INFO mistralrs_core::pipeline::isq: Applying in-situ \
         quantization into Some(HQQ8) to 449 tensors.",
        "INFO - Start quantizing layer 1/32",
        "INFO - Quantizing self_attn.k_proj in layer 1/32...",
    ] {
        let text = format!("{line}\n{MESSAGE}");
        assert_eq!(
            explain_text(&text).phase.failed_in,
            Phase::FormatConversion,
            "{line}"
        );
    }
    // A layer named in another line is no quantizer's.
    let other = format!("Loading weights in layer 3 of 32\n{MESSAGE}");
    assert_ne!(
        explain_text(&other).phase.failed_in,
        Phase::FormatConversion
    );
}

#[test]
fn a_scripts_comment_headings_name_no_stage() {
    let script = "```\nfrom awq import AutoAWQForCausalLM\n\n# Load model\nmodel = \
                  AutoAWQForCausalLM.from_pretrained(model_path)\n\n# Quantize\n\
                  model.quantize(tokenizer, quant_config=quant_config)\n\n# Save quantized \
                  model\nmodel.save_quantized(quant_path)\n```\n";
    assert_eq!(phase_of(script), Phase::Unknown);
    // A markdown heading (a title) still names it.
    assert_eq!(
        phase_of("# OOM when loading the model\n\nI run the script below."),
        Phase::WeightsLoad
    );
}

#[test]
fn a_korean_training_that_completed_is_no_stage_of_the_failure() {
    let words =
        "A100 80G 4장으로 돌리는대도 CUDA OOM 에러가 발생하여서요.\n(ps. polyglot-ko-1.3b을 \
                 돌려봤는데 정상적으로 학습이 완료되었습니다.)";
    assert_eq!(phase_of(words), Phase::Unknown);
}

#[test]
fn new_wordings_of_the_devices_memory_are_read() {
    // Intel Extension for PyTorch on an XPU.
    let xpu = "RuntimeError: Allocation is out of device memory on current platform.\n";
    assert!(explain_text(xpu).is_gpu_oom);
    // nvdiffrast's status 2 and the call; another status is not the memory's.
    let nvdr = "RuntimeError: Cuda error: 2[cudaMalloc(&m_gpuPtr, bytes);]\n";
    assert!(explain_text(nvdr).is_gpu_oom);
    let other = "RuntimeError: Cuda error: 700[cudaMemcpy(dst, src, n, kind);]\n";
    assert!(!explain_text(other).is_gpu_oom);
    // A lower-case `oom` after `的` in a Chinese title.
    assert!(explain_text("# [Bug] 评估过程中的oom 问题\n\nsome text\n").is_gpu_oom);
}

#[test]
fn the_shells_chinese_killed_closing_a_code_span_is_the_hosts() {
    let text = "# 加载视频为什么内存会oom？\n`qwen-vl-utils using torchvision to read video.\n\
                已杀死`\n";
    assert!(!explain_text(text).is_gpu_oom);
}

#[test]
fn a_raw_cuda_error_told_in_a_sentence_gives_way_to_the_message_below() {
    let text = "Hi, I tried to run it on the TUM sequence according to the readme file, but got \
                CUDA error: out of memory.\n`RuntimeError: CUDA out of memory. Tried to allocate \
                86.00 MiB (GPU 0; 5.80 GiB total capacity; 686.18 MiB already allocated; 98.94 \
                MiB free; 780.00 MiB reserved in total by PyTorch)`\n";
    let report = explain_text(text);
    let oom = report.oom.expect("a message");
    assert_eq!(
        oom.tried_to_allocate_bytes.map(|b| b.0),
        Some(86 * 1024 * 1024)
    );
}

#[test]
fn a_trainings_course_and_each_question_name_their_stages() {
    for words in [
        "The training works fine until 1000 steps and then fails with this error",
        "as training progressed (around 3 hours), the error suddenly appeared",
        "我正在对internvl2使用视频数据进行full finetune，显卡为单张32G V100，报错",
    ] {
        assert_eq!(phase_of(words), Phase::TrainingStep, "{words}");
    }
    for words in [
        "this happends with any question to model",
        "Error during rendering: out of memory",
    ] {
        assert_eq!(phase_of(words), Phase::Inference, "{words}");
    }
    // A request that starts or loads a model is no answer to it.
    assert_ne!(
        phase_of("the model is initialised with every request leading to CUDA out of memory"),
        Phase::Inference
    );
}

#[test]
fn a_chinese_habit_asked_with_a_question_mark_is_reported() {
    let text = "您好，我在训练mmdetction的时候，每次都是训练600~1000steps之后会报错？\n\nERROR: \
                Unexpected bus error encountered in worker. This might be caused by insufficient \
                shared memory (shm).\n";
    assert_eq!(explain_text(text).phase.failed_in, Phase::TrainingStep);
}

#[test]
fn a_process_killed_by_the_system_in_chinese_is_the_hosts() {
    let text = "# 模型加载进程被系统终止\n\n加载进程在57%时仍被系统杀死\n";
    let report = explain_text(text);
    assert!(!report.is_gpu_oom, "{report:#?}");
    assert!(report.verdict.headline.contains("killed"), "{report:#?}");
}

#[test]
fn the_model_moved_by_the_training_loops_own_statement_is_the_load() {
    let text =
        "Traceback (most recent call last):\n  File \"/x/transformers/trainer.py\", line 622, \
                in train\n    self.model = model.to(self.args.device)\n  File \"/x/torch/nn/\
                modules/module.py\", line 607, in to\n    return self._apply(convert)\n\
                RuntimeError: CUDA out of memory. Tried to allocate 16.00 MiB (GPU 0; 10.92 GiB \
                total capacity; 10.30 GiB already allocated; 3.50 MiB free; 10.35 GiB reserved \
                in total by PyTorch)\n";
    assert_eq!(explain_text(text).phase.failed_in, Phase::WeightsLoad);
    // The loop's step below it is still the step.
    let step = "Traceback (most recent call last):\n  File \"/x/transformers/trainer.py\", line \
                1329, in train\n    tr_loss_step = self.training_step(model, inputs)\n\
                RuntimeError: CUDA out of memory. Tried to allocate 16.00 MiB (GPU 0; 10.92 GiB \
                total capacity; 10.30 GiB already allocated; 3.50 MiB free; 10.35 GiB reserved \
                in total by PyTorch)\n";
    assert_eq!(explain_text(step).phase.failed_in, Phase::TrainingStep);
}

#[test]
fn a_third_rounds_wordings_and_stages_are_read() {
    // Faiss 1.x's temporary-memory stack, with its (overflowed) request.
    let faiss =
        "Faiss assertion 'err == cudaSuccess' failed in char* faiss::gpu::StackDeviceMemory::\
                 Stack::getAlloc(size_t, cudaStream_t) at StackDeviceMemory.cpp:77; details: \
                 cudaMalloc error 2 on alloc size 18446744065770205184\n";
    let report = explain_text(faiss);
    assert!(report.is_gpu_oom, "{report:#?}");
    assert_eq!(
        report
            .oom
            .and_then(|oom| oom.tried_to_allocate_bytes)
            .map(|b| b.0),
        Some(18446744065770205184)
    );
    // Thrust's device allocator, not the host's `bad_alloc`.
    let thrust = "terminate called after throwing an instance of \
                  'thrust::system::detail::bad_alloc'\n";
    assert!(explain_text(thrust).is_gpu_oom);
    assert!(
        !explain_text("terminate called after throwing an instance of 'std::bad_alloc'\n")
            .is_gpu_oom
    );
    // TensorFlow's session error with its tensor cut off by the reporter.
    let tf = "在尝试训练的时候,发生 ResourceExhaustedError (see above for traceback): OOM 的错误\n";
    assert!(explain_text(tf).is_gpu_oom);
    for (words, phase) in [
        (
            "It happened at around 57000 tokens of context during a regular token decode",
            Phase::Inference,
        ),
        ("The training failed midway.", Phase::TrainingStep),
        (
            "When deploying our training code, we schedule jobs and it runs out of memory",
            Phase::Unknown,
        ),
        (
            "在长上下文 GRPO训练（62k， max_prompt_length=60k）的时候报错",
            Phase::TrainingStep,
        ),
    ] {
        assert_eq!(phase_of(words), phase, "{words}");
    }
}
