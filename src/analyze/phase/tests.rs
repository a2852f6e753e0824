//! Tests of the phase decision: frames and log lines in, the phase that failed out.

use super::*;

fn frame(line: u64, function: &str, file: &str) -> Frame {
    Frame {
        called: false,
        line,
        function: function.to_string(),
        file: file.to_string(),
        code: None,
    }
}

/// The decision on log progress and traceback frames alone (no message, hint or nearby line).
fn decide_from(progress: &Progress, frames: &[Frame]) -> PhaseReport {
    decide(PhaseInputs {
        failure: None,
        progress,
        frames,
        hint: None,
        late: None,
        nearby: None,
        training_step_shown: false,
    })
}

#[test]
fn deepest_mapped_frame_wins() {
    let frames = [
        frame(1, "_initialize_kv_caches", "/x/vllm/v1/engine/core.py"),
        frame(
            2,
            "determine_available_memory",
            "/x/vllm/v1/worker/gpu_worker.py",
        ),
        frame(3, "profile_run", "/x/vllm/v1/worker/gpu_model_runner.py"),
        frame(4, "_dummy_run", "/x/vllm/v1/worker/gpu_model_runner.py"),
        frame(5, "forward", "/x/vllm/model_executor/models/llama.py"),
    ];
    let report = decide_from(&Progress::default(), &frames);
    assert_eq!(report.failed_in, Phase::Profiling);
    assert_eq!(report.prompt_can_be_cause, Some(false));
}

#[test]
fn a_startup_stage_that_failed_is_not_the_last_completed() {
    let mut progress = Progress::default();
    progress.observe(EventKind::WeightsLoaded, Phase::WeightsLoad, 1);
    progress.observe(EventKind::ProfilingDone, Phase::Profiling, 2);
    progress.observe(EventKind::KvCacheAllocated, Phase::KvCacheAlloc, 3);
    progress.observe(EventKind::KvConcurrency, Phase::KvCacheAlloc, 4);
    // The KV cache was sized, then a frame of its allocation failed.
    let frames = [frame(5, "initialize_cache", "/x/vllm/worker/worker.py")];
    let report = decide_from(&progress, &frames);
    assert_eq!(report.failed_in, Phase::KvCacheAlloc);
    assert_eq!(report.last_completed, Some(Phase::Profiling));
    assert!(report.evidence[0].contains("kv_cache_alloc had begun"));
    assert_eq!(
        report.evidence[1],
        "line 2: the log shows profiling completed"
    );
    // Steps repeat: a failing step comes after completed ones.
    let mut progress = Progress::default();
    progress.observe(EventKind::TrainingStep, Phase::TrainingStep, 7);
    let report = decide_from(&progress, &[]);
    assert_eq!(report.failed_in, Phase::TrainingStep);
    // One training line shows the training started, not a step completed.
    assert_eq!(report.last_completed, None);
    assert_eq!(
        report.evidence,
        ["line 7: training had started (no later line shows a step completed) and the log shows \
          no end of it"]
    );
    progress.observe(EventKind::TrainingStep, Phase::TrainingStep, 9);
    let report = decide_from(&progress, &[]);
    assert_eq!(report.failed_in, Phase::TrainingStep);
    assert_eq!(report.last_completed, Some(Phase::TrainingStep));
    assert_eq!(
        report.evidence,
        [
            "line 9: the log shows training_step completed",
            "line 9: training_step had started and the log shows no end of it"
        ]
    );
}

#[test]
fn nothing_shown_is_unknown() {
    let report = decide_from(&Progress::default(), &[frame(1, "forward", "/x/model.py")]);
    assert_eq!(report.failed_in, Phase::Unknown);
    assert_eq!(report.server_was_ready, None);
}

#[test]
fn ready_server_then_failure_is_inference() {
    let mut progress = Progress::default();
    progress.observe(EventKind::EngineStart, Phase::Startup, 1);
    progress.observe(EventKind::WeightsLoaded, Phase::WeightsLoad, 5);
    progress.observe(EventKind::ServerReady, Phase::Inference, 9);
    let report = decide_from(&progress, &[]);
    assert_eq!(report.failed_in, Phase::Inference);
    assert_eq!(report.server_was_ready, Some(true));
    assert_eq!(report.last_completed, Some(Phase::WeightsLoad));
}

fn failed_in(frames: &[Frame]) -> (Phase, Vec<String>) {
    let report = decide_from(&Progress::default(), frames);
    (report.failed_in, report.evidence)
}

#[test]
fn a_stage_encloses_the_forward_it_runs() {
    // vLLM V0: profile_run runs execute_model.
    let (phase, evidence) = failed_in(&[
        frame(
            1,
            "determine_num_available_blocks",
            "/x/vllm/worker/worker.py",
        ),
        frame(2, "profile_run", "/x/vllm/worker/model_runner.py"),
        frame(3, "execute_model", "/x/vllm/worker/model_runner.py"),
        frame(4, "forward", "/x/vllm/model_executor/models/llama.py"),
    ]);
    assert_eq!(phase, Phase::Profiling);
    assert!(evidence[0].contains("`profile_run`"), "{evidence:?}");
    assert!(evidence[0].contains("the deeper `execute_model` (line 3)"));
    // TGI: warmup runs generate_token, then sizes and allocates the KV cache.
    let tgi = "/x/text_generation_server/models/flash_causal_lm.py";
    assert_eq!(
        failed_in(&[
            frame(1, "Warmup", "/x/text_generation_server/server.py"),
            frame(2, "warmup", tgi),
            frame(3, "generate_token", tgi)
        ])
        .0,
        Phase::Profiling
    );
    assert_eq!(
        failed_in(&[frame(1, "warmup", tgi), frame(2, "init_kv_cache", tgi)]).0,
        Phase::KvCacheAlloc
    );
    // SGLang: graph capture runs the model.
    let sgl = "/x/sglang/srt/model_executor/cuda_graph_runner.py";
    assert_eq!(
        failed_in(&[
            frame(1, "__init__", sgl),
            frame(2, "capture", sgl),
            frame(3, "capture_one_batch_size", sgl),
            frame(4, "run_once", sgl),
            frame(5, "forward", "/x/sglang/srt/models/llama.py")
        ])
        .0,
        Phase::CudaGraphCapture
    );
}

#[test]
fn vllm_v1_dummy_run_is_decided_by_its_caller() {
    let runner = "/x/vllm/v1/worker/gpu_model_runner.py";
    assert_eq!(
        failed_in(&[
            frame(
                1,
                "compile_or_warm_up_model",
                "/x/vllm/v1/worker/gpu_worker.py"
            ),
            frame(2, "capture_model", runner),
            frame(3, "_dummy_run", runner)
        ])
        .0,
        Phase::CudaGraphCapture
    );
    assert_eq!(
        failed_in(&[
            frame(1, "profile_run", runner),
            frame(2, "_dummy_run", runner)
        ])
        .0,
        Phase::Profiling
    );
    assert_eq!(
        failed_in(&[frame(1, "_dummy_run", runner)]).0,
        Phase::Unknown
    );
    assert_eq!(
        failed_in(&[
            frame(1, "run_engine_core", "/x/vllm/v1/engine/core.py"),
            frame(2, "run_busy_loop", "/x/vllm/v1/engine/core.py"),
            frame(3, "step", "/x/vllm/v1/engine/core.py"),
            frame(4, "execute_model", runner)
        ])
        .0,
        Phase::Inference
    );
}

#[test]
fn wrappers_decide_only_when_nothing_else_does() {
    let core = "/x/vllm/v1/engine/core.py";
    let (phase, evidence) = failed_in(&[
        frame(1, "_initialize_kv_caches", core),
        frame(2, "collective_rpc", "/x/vllm/executor/abstract.py"),
    ]);
    assert_eq!(phase, Phase::KvCacheAlloc);
    assert!(evidence[0].contains("encloses"));
    assert_eq!(
        failed_in(&[
            frame(1, "_initialize_kv_caches", core),
            frame(
                2,
                "determine_available_memory",
                "/x/vllm/v1/executor/abstract.py"
            )
        ])
        .0,
        Phase::Profiling
    );
    // A log line that shows the stage beats the wrapper.
    let mut progress = Progress::default();
    progress.observe(EventKind::CudaGraphCaptureStart, Phase::CudaGraphCapture, 1);
    let frames = [frame(2, "_initialize_kv_caches", core)];
    let report = decide_from(&progress, &frames);
    assert_eq!(report.failed_in, Phase::CudaGraphCapture);
}

#[test]
fn offloaded_weights_moved_in_a_forward_are_not_a_load() {
    let hooks = "/x/accelerate/hooks.py";
    let (phase, _) = failed_in(&[
        frame(1, "generate", "/x/transformers/generation/utils.py"),
        frame(2, "_sample", "/x/transformers/generation/utils.py"),
        frame(3, "new_forward", hooks),
        frame(4, "pre_forward", hooks),
        frame(
            5,
            "set_module_tensor_to_device",
            "/x/accelerate/utils/modeling.py",
        ),
    ]);
    assert_eq!(phase, Phase::Inference);
    // Without the hook it is a load.
    assert_eq!(
        failed_in(&[
            frame(1, "dispatch_model", "/x/accelerate/big_modeling.py"),
            frame(
                2,
                "set_module_tensor_to_device",
                "/x/accelerate/utils/modeling.py"
            )
        ])
        .0,
        Phase::WeightsLoad
    );
}

#[test]
fn evaluation_inside_training_is_inference_and_says_so() {
    let trainer = "/x/transformers/trainer.py";
    let (phase, evidence) = failed_in(&[
        frame(1, "train", trainer),
        frame(2, "_inner_training_loop", trainer),
        frame(3, "_maybe_log_save_evaluate", trainer),
        frame(4, "evaluate", "/x/transformers/trainer_seq2seq.py"),
        frame(5, "prediction_step", "/x/transformers/trainer_seq2seq.py"),
        frame(6, "generate", "/x/transformers/generation/utils.py"),
    ]);
    assert_eq!(phase, Phase::Inference);
    assert!(
        evidence[0].contains("evaluation inside training (`_inner_training_loop`, line 2)"),
        "{evidence:?}"
    );
    assert_eq!(
        failed_in(&[
            frame(1, "train", trainer),
            frame(2, "_inner_training_loop", trainer),
            frame(3, "training_step", trainer),
            frame(4, "backward", "/x/torch/_tensor.py")
        ])
        .0,
        Phase::TrainingStep
    );
    // The model moved to the GPU when training starts is a load.
    assert_eq!(
        failed_in(&[
            frame(1, "train", trainer),
            frame(2, "_inner_training_loop", trainer),
            frame(3, "_wrap_model", "/x/transformers/trainer.py"),
            frame(4, "to", "/x/torch/nn/modules/module.py"),
            frame(5, "_apply", "/x/torch/nn/modules/module.py")
        ])
        .0,
        Phase::WeightsLoad
    );
}

#[test]
fn an_evaluation_hook_deeper_than_the_training_loop_decides() {
    let loops = "/x/lightning/pytorch/loops/";
    let call = "/x/lightning/pytorch/trainer/call.py";
    // Lightning runs the validation epoch's end hook from inside `fit_loop`.
    let (phase, evidence) = failed_in(&[
        frame(1, "fit", "/x/lightning/pytorch/trainer/trainer.py"),
        frame(2, "advance", &format!("{loops}fit_loop.py")),
        frame(3, "run", &format!("{loops}training_epoch_loop.py")),
        frame(
            4,
            "on_advance_end",
            &format!("{loops}training_epoch_loop.py"),
        ),
        frame(5, "run", &format!("{loops}evaluation_loop.py")),
        frame(
            6,
            "_on_evaluation_epoch_end",
            &format!("{loops}evaluation_loop.py"),
        ),
        frame(7, "_call_lightning_module_hook", call),
        frame(8, "on_validation_epoch_end", "/home/u/train_seg.py"),
    ]);
    assert_eq!(phase, Phase::Inference);
    // Lightning's own evaluation-loop frame has a rule of its own (`rules.rs`); the user's hook
    // decides where no rule covers the loop. Either way the evidence names the training loop
    // around it.
    assert!(
        (evidence[0].contains("`on_validation_epoch_end`")
            || evidence[0].contains("`_on_evaluation_epoch_end`"))
            && evidence[0].contains("evaluation inside training"),
        "{evidence:?}"
    );
    // The caller's `validate` called from its own training loop.
    let (phase, _) = failed_in(&[
        frame(1, "<module>", "train.py"),
        frame(2, "train", "train.py"),
        frame(3, "validate", "train.py"),
        frame(
            4,
            "_call_impl",
            "/x/site-packages/torch/nn/modules/module.py",
        ),
    ]);
    assert_eq!(phase, Phase::Inference);
    // Not evaluation: a diffusion loss's helper, a library checking its arguments, torch.compile's
    // frame evaluation, a training step of its own.
    for (function, file) in [
        (
            "predict_start_from_noise",
            "/x/site-packages/diffusers/ddpm.py",
        ),
        (
            "_validate_args",
            "/x/site-packages/torch/distributions/distribution.py",
        ),
        ("_fn", "/x/site-packages/torch/_dynamo/eval_frame.py"),
        ("compute_loss_and_validate_grads", "train.py"),
        ("evaluate_and_backward", "train.py"),
    ] {
        let (phase, evidence) = failed_in(&[
            frame(1, "train", "train.py"),
            frame(2, function, file),
            frame(
                3,
                "_call_impl",
                "/x/site-packages/torch/nn/modules/module.py",
            ),
        ]);
        assert_eq!(phase, Phase::TrainingStep, "{function}: {evidence:?}");
    }
    // Nothing around it is training: no training loop is claimed.
    let (phase, evidence) = failed_in(&[
        frame(1, "main", "run.py"),
        frame(2, "on_validation_epoch_end", "run.py"),
    ]);
    assert_ne!(phase, Phase::TrainingStep);
    assert!(
        evidence
            .iter()
            .all(|line| !line.contains("inside training")),
        "{evidence:?}"
    );
}

#[test]
fn an_evaluation_line_after_the_last_training_line_is_inference() {
    let mut progress = Progress::default();
    progress.observe(EventKind::TrainingStep, Phase::TrainingStep, 3);
    progress.observe(EventKind::TrainingStep, Phase::TrainingStep, 8);
    let decide_with = |nearby| {
        decide(PhaseInputs {
            failure: None,
            progress: &progress,
            frames: &[],
            hint: None,
            late: None,
            nearby,
            training_step_shown: false,
        })
    };
    let status = "the program's status line printed just before it failed";
    let report = decide_with(Some((
        12,
        Phase::Inference,
        status,
        "validating on full-resolution scans: 4/40",
    )));
    assert_eq!(report.failed_in, Phase::Inference);
    assert!(
        report
            .evidence
            .iter()
            .any(|line| line.contains("evaluation inside training")
                && line.contains("line 12")
                && line.contains("(line 8)")),
        "{:?}",
        report.evidence
    );
    // Printed before the last training line: the training went on after it.
    let report = decide_with(Some((5, Phase::Inference, status, "eval batch 3/10")));
    assert_eq!(report.failed_in, Phase::TrainingStep);
    // A later line naming another stage than evaluation changes nothing.
    let report = decide_with(Some((12, Phase::WeightsLoad, status, "loading model 2/3")));
    assert_eq!(report.failed_in, Phase::TrainingStep);
}

#[test]
fn module_moves_and_casts() {
    let module = "/x/torch/nn/modules/module.py";
    let (to, half, lazy) = (
        failed_in(&[
            frame(1, "to", module),
            frame(2, "_apply", module),
            frame(3, "convert", module),
        ])
        .0,
        failed_in(&[
            frame(1, "half", module),
            frame(2, "_apply", module),
            frame(3, "<lambda>", module),
        ])
        .0,
        failed_in(&[
            frame(1, "cuda", module),
            frame(2, "_apply", module),
            frame(3, "_lazy_init", "/x/torch/cuda/__init__.py"),
        ])
        .0,
    );
    assert_eq!(
        (to, half, lazy),
        (Phase::WeightsLoad, Phase::FormatConversion, Phase::Startup)
    );
    // A meta-device model given its storage on the GPU (`to_empty` → `_apply` → the lambda).
    let materialized = failed_in(&[
        frame(1, "to_empty", module),
        frame(2, "_apply", module),
        frame(3, "<lambda>", module),
        frame(4, "empty_like", "/x/torch/_refs/__init__.py"),
    ]);
    assert_eq!(materialized.0, Phase::WeightsLoad);
    // Windows paths.
    let windows = r"C:\Users\u\miniconda3\Lib\site-packages\torch\nn\modules\module.py";
    assert_eq!(failed_in(&[frame(1, "to", windows)]).0, Phase::WeightsLoad);
    // A Jupyter call line (`---> 1 model.to(0)`) has no path: `to` alone proves nothing.
    assert_eq!(failed_in(&[frame(1, "to", "<call>")]).0, Phase::Unknown);
}

#[test]
fn a_sized_kv_cache_is_being_allocated() {
    let mut progress = Progress::default();
    progress.observe(EventKind::ProfilingStart, Phase::Profiling, 1);
    progress.observe(EventKind::KvCachePlanned, Phase::KvCacheAlloc, 2);
    assert_eq!(progress.in_progress, Some((Phase::KvCacheAlloc, 2)));
    assert_eq!(progress.last_completed, Some((Phase::Profiling, 2)));
    progress.observe(EventKind::KvConcurrency, Phase::KvCacheAlloc, 3);
    assert_eq!(progress.in_progress, Some((Phase::KvCacheAlloc, 3)));
    progress.observe(EventKind::CudaGraphCaptureStart, Phase::CudaGraphCapture, 4);
    assert_eq!(progress.in_progress, Some((Phase::CudaGraphCapture, 4)));
    // An allocation that the log reports done closes the stage.
    let mut done = Progress::default();
    done.observe(EventKind::KvCacheAllocated, Phase::KvCacheAlloc, 1);
    assert_eq!(done.in_progress, None);
}

#[test]
fn native_backward_frames_are_a_training_step() {
    let lib = "/x/site-packages/torch/lib/libtorch_cuda.so";
    for function in [
        "native::slow_conv_transpose3d_backward_out_cuda_template",
        "ConvolutionBackward0::apply",
        "Engine::evaluate_function",
    ] {
        assert_eq!(
            frame_phase(function, lib),
            Some(Phase::TrainingStep),
            "{function}"
        );
    }
    assert_eq!(frame_phase("native::conv2d", lib), None);
    assert_eq!(frame_phase("ConvolutionBackward::apply", lib), None);
    // A Python function of that name is not a native frame.
    assert_eq!(frame_phase("my_backward", "/x/model.py"), None);
}

#[test]
fn every_rule_is_reachable() {
    for (index, rule) in FRAME_RULES.iter().enumerate() {
        let file = if rule.path.is_empty() {
            "/x/y.py".to_string()
        } else {
            format!("/x/{}/y.py", rule.path)
        };
        let found = frame_rule(rule.function, &file).map(|found| found as *const FrameRule);
        assert!(found.is_some(), "{}", rule.function);
        let first = FRAME_RULES
            .iter()
            .position(|other| std::ptr::eq(other, found.unwrap()))
            .unwrap();
        // An earlier rule may shadow a later one only when both say the same.
        if first != index {
            assert_eq!(
                FRAME_RULES[first].phase, rule.phase,
                "{} shadowed",
                rule.function
            );
        }
    }
}

#[test]
fn engine_words_around_the_error_name_the_stage() {
    let tgi = "thread 'main' panicked at 'Unable to warmup model: Generation(\"Allocation on device 0 would exceed allowed memory. (out of memory)";
    assert_eq!(
        wrapping_phrase(tgi),
        Some((Phase::Profiling, "Unable to warmup model"))
    );
    let sglang =
        "Exception: Capture cuda graph failed: CUDA out of memory. Tried to allocate 2.00 GiB.";
    assert_eq!(
        wrapping_phrase(sglang).map(|(phase, _)| phase),
        Some(Phase::CudaGraphCapture)
    );
    assert_eq!(
        wrapping_phrase("torch.OutOfMemoryError: CUDA out of memory."),
        None
    );
}

#[test]
fn backend_creation_and_chainer_loops() {
    let cases = [
        (
            "backends",
            "/venv/site-packages/jax/_src/xla_bridge.py",
            Phase::Startup,
        ),
        (
            "_init_backend",
            "/venv/site-packages/jax/_src/xla_bridge.py",
            Phase::Startup,
        ),
        (
            "make_c_api_client",
            "/venv/site-packages/jaxlib/xla_client.py",
            Phase::Startup,
        ),
        (
            "_lazy_new",
            "~/envs/py3/lib/python3.5/site-packages/torch/cuda/__init__.py",
            Phase::Startup,
        ),
        (
            "run",
            "/site-packages/chainer/training/trainer.py",
            Phase::TrainingStep,
        ),
        (
            "update_core",
            "/site-packages/chainer/training/updaters/standard_updater.py",
            Phase::TrainingStep,
        ),
        (
            "update",
            "/site-packages/chainer/optimizer.py",
            Phase::TrainingStep,
        ),
    ];
    for (function, file, phase) in cases {
        assert_eq!(
            frame_phase(function, file),
            Some(phase),
            "{function} {file}"
        );
    }
    // Not any `run` or `update`.
    assert_eq!(frame_phase("run", "/app/server.py"), None);
    assert_eq!(frame_phase("update", "/app/state.py"), None);
}

#[test]
fn a_ggml_host_buffer_says_its_stage_too() {
    use crate::model::failure::{EngineFigures, OomFigures};
    let message = OomMessage {
        kind: OomKind::HostMemory,
        is_gpu_oom: false,
        engine_hint: None,
        figures: OomFigures::default(),
        line: 9,
        stream: None,
        exception: None,
        text: "error loading model: unable to allocate CUDA_Host buffer".to_string(),
        end_line: 9,
        t_ms: None,
        details: EngineFigures {
            buffer_type: Some("CUDA_Host".to_string()),
            buffer_purpose: Some("model weights".to_string()),
            ..EngineFigures::default()
        },
    };
    assert_eq!(message_phase(&message), Some(Phase::WeightsLoad));
    let plain = OomMessage {
        details: EngineFigures::default(),
        ..message
    };
    assert_eq!(message_phase(&plain), None);
}

#[test]
fn issue13_wrapping_words_and_keras_fit() {
    for (line, phase) in [
        ("infer:send_error: router/src/infer.rs:554: Request failed during generation: Server error: CUDA out of memory.", Phase::Inference),
        ("ERROR 03-31 15:19:44 [async_llm_engine.py:68] torch.OutOfMemoryError: CUDA out of memory.", Phase::Inference),
        ("** model stable-diffusion-1.5 could not be loaded: CUDA out of memory.", Phase::WeightsLoad),
        ("Error merging checkpoints: CUDA out of memory.", Phase::FormatConversion),
    ] {
        assert_eq!(wrapping_phrase(line).map(|(p, _)| p), Some(phase), "{line}");
    }
    // Keras `Model.fit`, also as a notebook arrow.
    assert_eq!(frame_phase("fit", "<call>"), Some(Phase::TrainingStep));
}

#[test]
fn a_library_rule_beats_the_callers_code() {
    let mut outer = frame(1, "train_one_epoch", "train.py");
    outer.code = Some("model.to(device)".into());
    let frames = [
        outer,
        frame(
            3,
            "generate",
            "/v/lib/python3.11/site-packages/transformers/generation/utils.py",
        ),
    ];
    let report = decide_from(&Progress::default(), &frames);
    assert_eq!(report.failed_in, Phase::Inference);
}

#[test]
fn the_callers_code_decides_when_no_library_rule_does_and_inputs_stay_unknown() {
    let mut user = frame(1, "step", "/home/me/loop.py");
    user.code = Some("out = model(x)".into());
    let mut inner = frame(3, "run", "/home/me/loop.py");
    inner.code = Some("x = x.to(device)".into());
    let frames = [user.clone(), inner];
    let decide_on = |frames: &[Frame]| decide_from(&Progress::default(), frames);
    assert_eq!(decide_on(&frames).failed_in, Phase::Unknown);
    let mut loading = user;
    loading.code = Some("model = model.cuda()".into());
    let report = decide_on(&[loading]);
    assert_eq!(report.failed_in, Phase::WeightsLoad);
    assert!(
        report
            .evidence
            .iter()
            .any(|e| e.contains("your code (me/loop.py) runs `model = model.cuda()`")),
        "{:?}",
        report.evidence
    );
}

#[test]
fn a_raw_cuda_error_from_the_first_module_move_is_context_creation() {
    let module = "/venv/lib/python3.12/site-packages/torch/nn/modules/module.py";
    let raw = "torch.AcceleratorError: CUDA error: out of memory\nSearch for \
               `cudaErrorMemoryAllocation' in https://docs.nvidia.com/cuda/ for more information.\n";
    let cached = "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 4.00 MiB. GPU 0 \
                  has a total capacity of 79.19 GiB of which 3.00 MiB is free.\n";
    let moved = [
        frame(3, "<module>", "/home/me/run.py"),
        frame(5, "to", module),
        frame(7, "_apply", module),
        frame(9, "convert", module),
    ];
    let decide_with = |text: &str, frames: &[Frame], progress: &Progress| {
        let message = crate::parse::oom_text::parse_text(text).remove(0);
        decide(PhaseInputs {
            failure: Some(&message),
            progress,
            frames,
            hint: None,
            late: None,
            nearby: None,
            training_step_shown: false,
        })
    };
    let report = decide_with(raw, &moved, &Progress::default());
    assert_eq!(report.failed_in, Phase::Startup);
    assert!(
        report.evidence[0].contains("creating the CUDA context failed"),
        "{:?}",
        report.evidence
    );
    // The caching allocator's own message is a tensor that did not fit: a weights load.
    assert_eq!(
        decide_with(cached, &moved, &Progress::default()).failed_in,
        Phase::WeightsLoad
    );
    // A loader around the move (accelerate placing checkpoint tensors): the load, as before.
    let mut loading = vec![frame(
        2,
        "from_pretrained",
        "/x/transformers/modeling_utils.py",
    )];
    loading.extend(moved.iter().cloned());
    assert_eq!(
        decide_with(raw, &loading, &Progress::default()).failed_in,
        Phase::WeightsLoad
    );
    // The log shows GPU work done before the move: the context exists.
    let mut progress = Progress::default();
    progress.observe(EventKind::WeightsLoaded, Phase::WeightsLoad, 1);
    assert_eq!(
        decide_with(raw, &moved, &progress).failed_in,
        Phase::WeightsLoad
    );
    // The caller's own tensor creation raising it decides nothing: with the caching allocator
    // off (`PYTORCH_NO_CUDA_MEMORY_CACHING=1`) a failed cudaMalloc of a huge tensor reads the
    // same (tests/fixtures/oom_text/pytorch-2.11-h200-device-no-caching.txt).
    let created = [Frame {
        code: Some("torch.empty(huge, dtype=torch.uint8, device=\"cuda\")".to_string()),
        ..frame(2, "<module>", "tests/device/oom_text/gen.py")
    }];
    assert_eq!(
        decide_with(raw, &created, &Progress::default()).failed_in,
        Phase::Unknown
    );
    // The raw error elsewhere (a backward pass) keeps its stage.
    let backward = [frame(4, "backward", "/x/site-packages/torch/_tensor.py")];
    assert_eq!(
        decide_with(raw, &backward, &Progress::default()).failed_in,
        Phase::TrainingStep
    );
}

#[test]
fn alloc_tensor_range_alone_names_no_buffer() {
    // ggml places the tensors of any context through `alloc_tensor_range` (the model's, the KV
    // cache's, an adapter's): alone it names no stage; llama's own load line does.
    let alone = "ggml_backend_cuda_buffer_type_alloc_buffer: allocating 6462.87 MiB on device 0: \
                 cudaMalloc failed: out of memory\nalloc_tensor_range: failed to allocate CUDA0 \
                 buffer of size 6776811776\n";
    let message = crate::parse::oom_text::parse_text(alone).remove(0);
    assert_eq!(message.details.buffer_purpose, None);
    assert_eq!(message_phase(&message), None);
    let loading =
        format!("{alone}llama_model_load: error loading model: unable to allocate CUDA0 buffer\n");
    let message = crate::parse::oom_text::parse_text(&loading).remove(0);
    assert_eq!(message_phase(&message), Some(Phase::WeightsLoad));
}

#[test]
fn a_comfyui_model_forward_is_a_generation() {
    let forward = [
        frame(1, "forward", "/Apps/ComfyUI/comfy/ldm/wan/model.py"),
        frame(
            2,
            "_conv_forward",
            "/venv/site-packages/torch/nn/modules/conv.py",
        ),
    ];
    assert_eq!(failed_in(&forward).0, Phase::Inference);
    // Under ComfyUI's weight loading, the load decides.
    let loading = [
        frame(
            1,
            "load_models_gpu",
            "/Apps/ComfyUI/comfy/model_management.py",
        ),
        frame(2, "forward", "/Apps/ComfyUI/comfy/ldm/wan/model.py"),
    ];
    assert_eq!(failed_in(&loading).0, Phase::WeightsLoad);
    // Another function of the architectures (a constructor) shows nothing.
    let built = [frame(1, "__init__", "/Apps/ComfyUI/comfy/ldm/wan/model.py")];
    assert_eq!(failed_in(&built).0, Phase::Unknown);
}

#[test]
fn fsdp_flattening_its_parameters_is_a_weights_load() {
    // A Rich box cut the path (`…/torch/distributed/fsdp/fla` │ `t_param.py:462 in …`).
    let wrapped = [frame(8, "_init_flat_param", "t_param.py")];
    assert_eq!(failed_in(&wrapped).0, Phase::WeightsLoad);
    // The forward's unshard (`_unshard`, `flatten_tensors` in a step) is not it.
    let step = [frame(
        8,
        "_unshard",
        "/x/torch/distributed/fsdp/_runtime_utils.py",
    )];
    assert_ne!(failed_in(&step).0, Phase::WeightsLoad);
}

#[test]
fn a_training_line_shows_a_step_done_or_only_the_start() {
    for done in [
        "Epoch 0/0  ━━━━━━━━━━╸     9/20 0:00:01 • 0:00:02 10.43it/s loss: 1.033",
        "{'loss': 1.9, 'learning_rate': 2e-05, 'epoch': 0.01}",
        "iter 3 step 1: loss 2.5",
        "steps:   1%|          | 12/1600 [00:40<1:30:00, 3.40s/it]",
        "Epoch 3 step 120 train loss 1.92",
        "steps:   0%|      | 1/1600 [00:00<20:09,  1.32it/s, avr_loss=0.087]Traceback (most",
        " | Epoch: [1][10003/10010]    Time 1.209  Data 0.000  Err 8.3525  top1  99.219",
        "iter 3436 step 53: loss 2.9911, iter time: 400.10ms",
    ] {
        assert!(shows_a_completed_step(done), "{done}");
    }
    for started in [
        "Epoch 1/3",
        "***** Running training *****",
        "Starting training...",
        "steps:   0%|          | 0/1600 [00:00<?, ?it/s]",
        "Training started: step 0",
        "**ERROR [06/09 11:05:25 d2.engine.train_loop]**: Exception during training:",
    ] {
        assert!(!shows_a_completed_step(started), "{started}");
    }
}

#[test]
fn a_checkpoint_save_inside_training_is_no_training_step() {
    let frames = [
        frame(1, "train", "/app/simpletuner/helpers/training/trainer.py"),
        // A save frame no rule knows (safetensors' `save_file` under it has a rule of its own,
        // which decides the same way).
        frame(3, "save_weights", "/venv/site-packages/lycoris/wrapper.py"),
    ];
    let mut progress = Progress::default();
    progress.observe(EventKind::TrainingStep, Phase::TrainingStep, 0);
    let plain = decide_from(&Progress::default(), &frames[..1]);
    let report = decide_from(&progress, &frames);
    // The training frame alone decides; with the save under it, nothing does (not even the
    // training lines of the log).
    assert_eq!(plain.failed_in, Phase::TrainingStep);
    assert_eq!(report.failed_in, Phase::Unknown, "{:?}", report.evidence);
    assert!(
        report
            .evidence
            .iter()
            .any(|why| why.contains("save_weights")),
        "{:?}",
        report.evidence
    );
}

#[test]
fn a_save_below_the_log_save_evaluate_hook_is_a_save() {
    let trainer = "/x/transformers/trainer.py";
    let callbacks = "/x/transformers/trainer_callback.py";
    // `_maybe_log_save_evaluate` → the callbacks' `on_save` → a user's `on_save`: the save ran.
    let (phase, evidence) = failed_in(&[
        frame(1, "train", trainer),
        frame(2, "_inner_training_loop", trainer),
        frame(3, "_maybe_log_save_evaluate", trainer),
        frame(4, "on_save", callbacks),
        frame(5, "call_event", callbacks),
        frame(6, "on_save", "/home/me/sft_with_export.py"),
    ]);
    assert_eq!(phase, Phase::Unknown, "{evidence:?}");
    assert!(
        evidence
            .iter()
            .any(|why| why.contains("saves a checkpoint")),
        "{evidence:?}"
    );
    // With no save below it, an evaluation named under the training is still the evaluation.
    let (phase, _) = failed_in(&[
        frame(1, "train", trainer),
        frame(2, "_inner_training_loop", trainer),
        frame(3, "run_validation", "/home/me/loop.py"),
    ]);
    assert_eq!(phase, Phase::Inference);
}
