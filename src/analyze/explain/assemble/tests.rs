//! Unit tests of `assemble.rs`: the status and stage lines it reads near a failure, the
//! library noise it passes over.

use super::{is_library_noise, item_done_short_of_total, last_progress_bar, status_line_phase};
use crate::analyze::explain::explain_text;
use crate::model::explain::Phase;

const OOM: &str = "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 6.10 GiB. GPU \
                   0 has a total capacity of 139.80 GiB of which 2.02 GiB is free.";

/// A status line, `between` lines, then a traceback of `frames` frames and the error.
fn status_then_traceback(status: &str, between: &[&str], frames: usize) -> String {
    let mut text = String::from("INFO request a1: 8 queries\nINFO request a1 done\n");
    text.push_str(status);
    text.push('\n');
    for line in between {
        text.push_str(line);
        text.push('\n');
    }
    text.push_str("Traceback (most recent call last):\n");
    for n in 0..frames {
        text.push_str(&format!(
            "  File \"/x/site-packages/lib/mod{n}.py\", line {n}, in call{n}\n    out = f(x)\n"
        ));
    }
    text.push_str(OOM);
    text.push('\n');
    text
}

#[test]
fn a_stage_line_over_the_traceback_is_read() {
    for (line, phase) in [
        (
            "2025-01-02 10:00:01,001 INFO llm: allocating KV cache: 40 layers",
            Phase::KvCacheAlloc,
        ),
        (
            "2025-01-02 10:00:01,001 - INFO - export - merging LoRA weights into the base",
            Phase::FormatConversion,
        ),
    ] {
        let report = explain_text(&status_then_traceback(line, &[], 2));
        assert_eq!(report.phase.failed_in, phase, "{:?}", report.phase);
        assert!(
            report.phase.evidence[0].contains("announcing the stage"),
            "{:?}",
            report.phase
        );
    }
    // A training run's step lines, then its evaluation announced: evaluation inside it.
    let text = status_then_traceback(
        "INFO lm: step 20/20 loss 3.1\nINFO lm: running evaluation on 640 sequences",
        &[],
        2,
    );
    let report = explain_text(&text);
    assert_eq!(
        report.phase.failed_in,
        Phase::Inference,
        "{:?}",
        report.phase
    );
    // A finished stage says nothing of the next.
    let report = explain_text(&status_then_traceback(
        "INFO llm: allocating KV cache: done",
        &[],
        2,
    ));
    assert_ne!(report.phase.failed_in, Phase::KvCacheAlloc);
}

#[test]
fn a_json_log_event_carrying_the_error_names_its_stage() {
    let error = "CUDA out of memory. Tried to allocate 12.00 GiB. GPU 0 has a total \
                 capacity of 79.15 GiB of which 8.17 GiB is free.";
    let text = format!(
        "{{\"level\": \"INFO\", \"event\": \"batch_done\", \"batch\": 64}}\n\
         {{\"level\": \"ERROR\", \"event\": \"embed_failed\", \"error\": \"{error}\"}}\n"
    );
    let report = explain_text(&text);
    assert_eq!(
        report.phase.failed_in,
        Phase::Inference,
        "{:?}",
        report.phase
    );
    assert!(
        report.phase.evidence[0].contains("`embed_failed`"),
        "{:?}",
        report.phase
    );
    assert_eq!(
        super::nearby::json_event_name(r#"{"ts": 1, "event": "train_step_failed", "error": "x"}"#),
        Some("train_step_failed")
    );
    // Not an object, or the error's own text as the message: no name.
    assert_eq!(
        super::nearby::json_event_name(r#"event: "embed_failed""#),
        None
    );
    assert_eq!(
        super::nearby::json_event_name(
            r#"{"message": "CUDA out of memory. Tried to allocate 2 GiB"}"#
        ),
        None
    );
}

#[test]
fn the_status_line_over_a_long_traceback_or_library_warnings_is_read() {
    let status = "2026-12-02 01:29:16,731 INFO [rerank] request c3: 4096 queries";
    // A traceback longer than the context kept before the error: its head's lines are kept.
    let report = explain_text(&status_then_traceback(status, &[], 30));
    assert_eq!(
        report.phase.failed_in,
        Phase::Inference,
        "{:?}",
        report.phase
    );
    assert!(
        report.phase.evidence[0].contains("line 3"),
        "{:?}",
        report.phase
    );
    // Allocator and Python warnings between the status line and the traceback.
    let warnings = [
        "W1202 01:33:04.004333    3189 bfc_allocator.cc:371] Allocator (GPU_0_bfc) ran out",
        "/x/site-packages/torch/_inductor/compile_fx.py:322: UserWarning: TF32 not enabled",
        "  warnings.warn(",
        "",
        "Failures (18):",
    ];
    let report = explain_text(&status_then_traceback(status, &warnings, 3));
    assert_eq!(
        report.phase.failed_in,
        Phase::Inference,
        "{:?}",
        report.phase
    );
    // The program's own line in between (not a library's) ends the search: unknown kept.
    let report = explain_text(&status_then_traceback(
        status,
        &["request c3: tokenizing done, model switched to the large one"],
        3,
    ));
    assert_eq!(report.phase.failed_in, Phase::Unknown, "{:?}", report.phase);
    // Too far above (beyond the bounded search) is not read.
    let many: Vec<&str> = std::iter::repeat_n("  | dump line", 60).collect();
    let report = explain_text(&status_then_traceback(status, &many, 3));
    assert_eq!(report.phase.failed_in, Phase::Unknown, "{:?}", report.phase);
}

fn phase_of(text: &str) -> Phase {
    explain_text(text).phase.failed_in
}

#[test]
fn a_failure_stated_before_its_log_takes_no_stage_from_the_log_under_it() {
    // A title quoting the error, then the launcher's log cut at its download step: the
    // message's continuation lines are the log of an earlier moment, not the failure's.
    let title = "torch.OutOfMemoryError: CUDA out of memory\n\n\
        2024-03-02T10:11:12.000001Z  INFO text_generation_launcher: Args { model_id: \"o/m\" }\n\
        2024-03-02T10:11:12.000002Z  INFO download: text_generation_launcher: Starting \
        download process.\n";
    assert_eq!(phase_of(title), Phase::Unknown);
    // A title naming the failure, then the training bar running to its end and a cut
    // traceback: the bar is the log leading to the failure, not a line printed under it.
    let mut text = String::from("CUDA OOM once the run is over\n\n");
    for done in 1..=4 {
        text.push_str(&format!(
            "Train epoch [1/1]: {}%|█████     | {done}/4 [00:0{done}<00:01,  1.0s/it]\n",
            done * 25
        ));
    }
    text.push_str("Traceback (most recent call last):\n  File \"/srv/job/run.py\", line 4\n");
    assert_eq!(phase_of(&text), Phase::Unknown);
    // Under a traceback, a bar drawn below the error is the failure's, even when the
    // program goes on to a later stage.
    let under = traceback(&[
        ("/srv/job/run.py", "<module>", "main()"),
        ("/srv/job/run.py", "main", "out = work(x)"),
    ]) + "Validating epoch 1:  40%|████      | 2/5 [00:02<00:03,  1.0s/it]\n\
          Train epoch 2:  10%|█         | 1/10 [00:01<00:09,  1.0s/it]\n";
    assert_eq!(phase_of(&under), Phase::Inference);
}

#[test]
fn a_training_bar_at_its_total_shows_the_loop_ended() {
    let bar = |done: u32| {
        format!(
            "Train epoch [2/2]: {}%|███████▌  | {done}/4 [00:04<00:01,  1.2s/it, loss=0.31]\n",
            done * 25
        )
    };
    let failure = "Traceback (most recent call last):\n\
        \x20 File \"/srv/job/run.py\", line 40, in <module>\n    finish(model)\n\
        \x20 File \"/srv/job/run.py\", line 31, in finish\n    out = merge(model)\n\
        torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a \
        total capacity of 79.10 GiB of which 1.50 GiB is free.\n";
    // The bar stopped short of its total: the step running failed.
    let running = format!("{}{failure}", bar(3));
    assert_eq!(phase_of(&running), Phase::TrainingStep);
    // The bar drawn at its total: the loop had ended; what ran after it is not shown.
    let ended = format!("{}{}{failure}", bar(3), bar(4));
    let report = explain_text(&ended);
    assert_eq!(report.phase.failed_in, Phase::Unknown, "{:?}", report.phase);
    assert!(
        report
            .phase
            .evidence
            .iter()
            .any(|line| line.contains("reached its total")),
        "{:?}",
        report.phase
    );
}

/// A traceback of `(file, function, statement)` frames, outermost first, then the error.
fn traceback(frames: &[(&str, &str, &str)]) -> String {
    let mut text = String::from("Traceback (most recent call last):\n");
    for (n, (file, function, statement)) in frames.iter().enumerate() {
        text.push_str(&format!(
            "  File \"{file}\", line {}, in {function}\n    {statement}\n",
            10 + n
        ));
    }
    text.push_str(OOM);
    text.push('\n');
    text
}

#[test]
fn a_function_named_like_an_evaluation_inside_the_training_forward_is_the_forward() {
    // `fit` → the model's `forward` → its `predict` (the scores the loss is taken of).
    let inside_forward = traceback(&[
        ("run_lm.py", "<module>", "trainer.fit(xs, ts, max_epoch=5)"),
        (
            "lib/trainer.py",
            "fit",
            "loss = model.forward(batch_x, batch_t)",
        ),
        ("nets/lm.py", "forward", "score = self.predict(xs)"),
        ("nets/lm.py", "predict", "xs = layer.forward(xs)"),
        ("lib/layers.py", "forward", "out = xs @ self.w"),
    ]);
    let report = explain_text(&inside_forward);
    assert_eq!(
        report.phase.failed_in,
        Phase::TrainingStep,
        "{:?}",
        report.phase
    );
    // The same with a helper no rule names (read by its name only).
    let helper = traceback(&[
        ("run_lm.py", "<module>", "trainer.fit(xs, ts, max_epoch=5)"),
        (
            "lib/trainer.py",
            "fit",
            "loss = model.forward(batch_x, batch_t)",
        ),
        (
            "nets/lm.py",
            "forward",
            "score = self.validation_scores(xs)",
        ),
        ("nets/lm.py", "validation_scores", "xs = layer.forward(xs)"),
        ("lib/layers.py", "forward", "out = xs @ self.w"),
    ]);
    assert_eq!(phase_of(&helper), Phase::TrainingStep);
    // Called from the loop itself, not from a forward: an evaluation pass.
    let from_the_loop = traceback(&[
        ("run_lm.py", "<module>", "trainer.fit(xs, ts, max_epoch=5)"),
        ("lib/trainer.py", "fit", "preds = model.predict(val_x)"),
        ("nets/lm.py", "predict", "xs = layer.forward(xs)"),
        ("lib/layers.py", "forward", "out = xs @ self.w"),
    ]);
    assert_eq!(phase_of(&from_the_loop), Phase::Inference);
}

#[test]
fn vllm_weights_read_in_full_end_the_load_and_show_no_next_stage() {
    let log = |line: &str| {
        format!(
            "INFO 01-02 03:04:05 [core.py:58] Initializing a V1 LLM engine (v0.10.1) with \
             config: model='org/m-8b'\nINFO 01-02 03:04:09 [default_loader.py:262] {line}\n\
             {OOM}\n"
        )
    };
    // The shards still being read: the load failed.
    let reading = log("Loading safetensors checkpoint shards:  50% Completed | 2/4 [00:05<00:05]");
    assert_eq!(phase_of(&reading), Phase::WeightsLoad);
    // `load_weights` done: the post-load processing that follows logs nothing.
    let report = explain_text(&log("Loading weights took 12.34 seconds"));
    assert_eq!(report.phase.failed_in, Phase::Unknown, "{:?}", report.phase);
    assert_eq!(report.phase.last_completed, Some(Phase::WeightsLoad));
}

#[test]
fn a_full_disk_takes_no_stage_from_the_log() {
    let log = "05/01/2024 10:00:00 - INFO - __main__ -   ***** Running training *****\n\
        05/01/2024 10:00:00 - INFO - __main__ -     Num examples = 1200\n\
        05/01/2024 10:02:00 - INFO - __main__ -   step 100/900 | train_loss 0.91\n";
    let oom = "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 \
        has a total capacity of 79.10 GiB of which 1.50 GiB is free.\n";
    assert_eq!(phase_of(&format!("{log}{oom}")), Phase::TrainingStep);
    let disk = "OSError: [Errno 28] No space left on device\n";
    let report = explain_text(&format!("{log}{disk}"));
    assert_eq!(report.phase.failed_in, Phase::Unknown, "{:?}", report.phase);
    assert!(
        report
            .phase
            .evidence
            .iter()
            .any(|line| line.contains("full disk")),
        "{:?}",
        report.phase
    );
}

#[test]
fn library_noise_is_told_from_a_programs_lines() {
    for noise in [
        "W1202 01:33:04.004333    3189 bfc_allocator.cc:371] Allocator ran out of memory",
        "E1202 01:33:04.005354    3118 config_assigner.cc:536] Could not get config for HLO",
        "/x/torch/_inductor/compile_fx.py:322: UserWarning: TensorFloat32 tensor cores",
        "  warnings.warn(",
        "}, metadata={op_name=\"jit(_fun)/dot_general\"}",
        "%parameter_0 = f32[131072,4096]{1,0} parameter(0)",
        "[W socket.cpp:663] [c10d] The client socket has failed to connect",
        "Failures (18):",
    ] {
        assert!(is_library_noise(noise), "{noise}");
    }
    for line in [
        "eval batch 1: 4096 examples",
        "INFO request c3 done: top ids [1, 2]",
        "When I run the script I get:",
        "Epoch 1/3",
    ] {
        assert!(!is_library_noise(line), "{line}");
    }
}

#[test]
fn an_input_done_short_of_the_total_is_a_runs_progress() {
    assert!(item_done_short_of_total(
        "22/11/10 13:59:12 | INFO | root | Predicted structure for hipAB-750 with length \
         765, pLDDT 51.2, pTM 0.264 in 105.6s. 1 / 5 completed."
    ));
    assert!(item_done_short_of_total("[3/10] done: out_3.png"));
    assert!(item_done_short_of_total(
        "batch 1/3: ok, 48 new tokens, 6.2 s"
    ));
    // All done, none done, a date, a training's progress.
    assert!(!item_done_short_of_total("5 / 5 completed."));
    assert!(!item_done_short_of_total("0/5 completed"));
    assert!(!item_done_short_of_total(
        "22/11/10 13:59:12 | INFO | root | Loading model"
    ));
    assert!(!item_done_short_of_total(
        "epoch 1: 3/10 batches, loss 0.41"
    ));
}

#[test]
fn a_status_line_names_the_stage_it_counts() {
    assert_eq!(
        status_line_phase("eval batch 1: 4096 examples, mean log-prob -7.0716"),
        Some(Phase::Inference)
    );
    assert_eq!(
        status_line_phase("2026-12-02 01:29:16,731 INFO [rerank] request c3: 4096 queries"),
        Some(Phase::Inference)
    );
    assert_eq!(
        status_line_phase("Epoch 3 step 120 train loss 1.92"),
        Some(Phase::TrainingStep)
    );
    // Finished stages, sentences, code, no count: nothing.
    assert_eq!(status_line_phase("Loaded model in 3.2 s"), None);
    assert_eq!(status_line_phase("epoch 2 done, loss 0.3"), None);
    assert_eq!(status_line_phase("When I train with batch 8 I get:"), None);
    assert_eq!(status_line_phase("I run inference on 2 GPUs"), None);
    assert_eq!(
        status_line_phase("    out = model.generate(ids, max_new_tokens=5)"),
        None
    );
    assert_eq!(status_line_phase("Running inference now"), None);
    assert_eq!(status_line_phase("Start training for 300 epochs"), None);
    assert_eq!(
        status_line_phase("2020-08-03T10:20:25 | training_loop: Starting training..."),
        None
    );
    assert_eq!(
        status_line_phase("Evaluating: 3/50 batches"),
        Some(Phase::Inference)
    );
    // A command line starts the job: it shows what was asked, not where it failed.
    assert_eq!(status_line_phase("python train.py --epochs 3"), None);
    assert_eq!(
        status_line_phase("$ torchrun --nproc_per_node 8 train.py"),
        None
    );
}

#[test]
fn the_last_redraw_of_a_progress_bar_is_read() {
    assert_eq!(
        last_progress_bar("Generating:   0%|          | 0/3 [00:19<?, ?it/s]"),
        Some(("Generating", 0, 3))
    );
    assert_eq!(
        last_progress_bar(
            "Loading weights:   0%|    | 0/75 [00:00<?, ?it/s]Loading weights: 100%|████| 75/75 \
             [00:00<00:00, 7279.59it/s]"
        ),
        Some(("Loading weights", 75, 75))
    );
    assert_eq!(
        last_progress_bar("epoch 1:  11%|█         | 7/64 [00:00<00:03, 15.49it/s, loss=1.03]"),
        Some(("epoch 1", 7, 64))
    );
    // No description, no counts, not a bar.
    assert_eq!(
        last_progress_bar(" 40%|████      | 2/5 [00:19<00:30]"),
        None
    );
    assert_eq!(last_progress_bar("Sampling: 40%|████      |"), None);
    assert_eq!(last_progress_bar("usage 40% of 24 GiB"), None);
}
