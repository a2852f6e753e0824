use super::super::{evidence, fill_unknown, InferenceInputs};
use super::*;
use crate::model::explain::{ContextLine, Phase, PhaseReport};
use crate::model::failure::EngineName;

const MODULE: &str = "/venv/lib/python3.12/site-packages/torch/nn/modules/module.py";
const LINEAR: &str = "/venv/lib/python3.12/site-packages/torch/nn/modules/linear.py";
const OOM: &str = "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB";

fn frame(line: u64, function: &str, file: &str, code: Option<&str>) -> Frame {
    Frame {
        line,
        function: function.to_string(),
        file: file.to_string(),
        called: false,
        code: code.map(str::to_string),
    }
}

/// A script's traceback whose innermost caller statement is `code`, into a module's forward
/// (or cut at the statement).
fn script_frames(code: Option<&str>, into_module: bool) -> Vec<Frame> {
    let mut frames = vec![
        frame(20, "<module>", "/home/u/work/run.py", Some("main()")),
        frame(22, "main", "/home/u/work/run.py", code),
    ];
    if into_module {
        frames.push(frame(
            24,
            "_wrapped_call_impl",
            MODULE,
            Some("return self._call_impl(*args, **kwargs)"),
        ));
        frames.push(frame(
            26,
            "forward",
            LINEAR,
            Some("return F.linear(input, self.weight, self.bias)"),
        ));
    }
    frames
}

/// (phase, evidence) the late reading gives for these lines (the failure is the line holding
/// the OOM message) and frames.
fn read(texts: &[&str], frames: &[Frame]) -> Option<(Phase, String)> {
    let owned: Vec<ContextLine> = texts
        .iter()
        .enumerate()
        .map(|(at, text)| ContextLine {
            line: at as u64 + 1,
            text: (*text).to_string(),
        })
        .collect();
    let refs: Vec<&ContextLine> = owned.iter().collect();
    let failure_line = owned
        .iter()
        .find(|line| line.text.contains("Error:"))
        .map_or(0, |line| line.line);
    let inputs = InferenceInputs {
        failure_line,
        lines: &refs,
        events: &[],
        frames,
        engine: EngineName::Pytorch,
        host_memory: false,
    };
    let _ = evidence(&inputs);
    let mut report = PhaseReport::default();
    fill_unknown(&mut report, &inputs);
    (report.failed_in != Phase::Unknown).then(|| {
        (
            report.failed_in,
            report.evidence.last().cloned().unwrap_or_default(),
        )
    })
}

#[test]
fn a_prediction_read_off_a_forward_is_inference() {
    for code in [
        "seg = model(vol).argmax(1)",
        "labels = torch.argmax(classifier(images), dim=-1)",
        "next_ids = lm(ids).logits[:, -1].argmax(-1)",
        "probs = net(batch).softmax(-1)",
        "emb = encoder(tokens).cpu()",
        "print(model(ids).shape)",
    ] {
        let frames = script_frames(Some(code), true);
        let (phase, why) = read(&["Traceback (most recent call last):", OOM], &frames)
            .unwrap_or_else(|| panic!("{code}"));
        assert_eq!(phase, Phase::Inference, "{code}");
        assert!(why.contains("with no training shown"), "{why}");
        assert!(why.starts_with("line 23: your code (work/run.py)"), "{why}");
    }
}

#[test]
fn a_bare_forward_decides_nothing() {
    // `y = model(x)` alone: a training step runs the same forward; a print of something else.
    for code in ["y = model(x)", "print(f\"step {step}\")"] {
        let frames = script_frames(Some(code), true);
        assert_eq!(
            read(&["Traceback (most recent call last):", OOM], &frames),
            None,
            "{code}"
        );
    }
    // A text cut with no statement under the caller's frame.
    let frames = script_frames(None, true);
    assert_eq!(
        read(
            &[
                "batch 1: out (2, 8)",
                "Traceback (most recent call last):",
                OOM
            ],
            &frames
        ),
        None
    );
}

#[test]
fn a_forward_whose_output_is_named_for_a_prediction_is_inference() {
    for code in [
        "scores = model(x)",
        "all_logits = net(batch)",
        "hidden = encoder(ids, attention_mask=m).last_hidden_state",
        "out = model(ids).logits",
        "img_emb, txt_emb = clip_model(pixels, ids)",
        // A vocoder's speech.
        "wav = vocoder(mel)",
        "audio = tts_model(tokens)",
    ] {
        let frames = script_frames(Some(code), true);
        let (phase, why) = read(&["Traceback (most recent call last):", OOM], &frames)
            .unwrap_or_else(|| panic!("{code}"));
        assert_eq!(phase, Phase::Inference, "{code}");
        assert!(
            why.contains("named for a prediction") || why.contains("off the output"),
            "{why}"
        );
    }
    // Generic names, a loss, a file or function named for training or a warm-up: nothing.
    for code in [
        "y = model(x)",
        "yhat = model(X)",
        "outputs = model(**batch)",
        "loss = model(x, labels=y)",
        "warmup_logits = model(dummy_ids)",
        // An array library's function over a transform's output.
        "feats = torch.log(spec(wav) + 1e-6)",
        "wav_loss = vocoder(mel)",
    ] {
        let frames = script_frames(Some(code), true);
        let read = read(&["Traceback (most recent call last):", OOM], &frames);
        assert!(
            read.as_ref()
                .is_none_or(|(phase, _)| *phase != Phase::Inference),
            "{code}: {read:?}"
        );
    }
    let mut frames = script_frames(Some("logits = model(x)"), true);
    frames[1].file = "/home/u/work/train.py".to_string();
    assert_eq!(
        read(&["Traceback (most recent call last):", OOM], &frames),
        None
    );
    let mut frames = script_frames(Some("logits = model(x)"), true);
    frames[1].function = "warmup".to_string();
    assert_eq!(
        read(&["Traceback (most recent call last):", OOM], &frames),
        None
    );
    // The same forward inside a training loop shown by its loss line.
    let frames = script_frames(Some("logits = model(x)"), true);
    assert_eq!(
        read(
            &[
                "step 3/100 loss 2.31",
                "Traceback (most recent call last):",
                OOM
            ],
            &frames
        ),
        None
    );
}

#[test]
fn result_lines_before_the_failure_show_a_forward_for_outputs() {
    let frames = script_frames(Some("out, w = mha(x, x, x)"), true);
    let (phase, why) = read(
        &[
            "seq 128: out (4, 128, 1024)",
            "seq 256: out (4, 256, 1024)",
            "Traceback (most recent call last):",
            OOM,
        ],
        &frames,
    )
    .expect("result lines");
    assert_eq!(phase, Phase::Inference);
    assert!(
        why.contains("line 1: `seq 128: out (4, 128, 1024)`"),
        "{why}"
    );
    for line in [
        "doc 3: 12 tags",
        "image 4/9: torch.Size([3, 512, 512])",
        // The number first, a unit glued to it, the same in other units in parentheses.
        "2048 tokens: attention entropy per layer [6.3, 6.32, 6.32, 6.33]",
        "512px (1024 tokens): features (8, 768), norm 15.19",
        "#7: 3 boxes",
    ] {
        assert!(result_line(line), "{line}");
    }
    for line in [
        "epoch 3: 12 batches",
        "step 10: loss 0.31 (4, 8)",
        "GPU 0: 12.5 GiB (80, 1)",
        "shard 2: 120 tensors",
        "batch 4: loaded (4, 8)",
        "Note: see (1, 2)",
        "batch 4: done",
        // Steps, devices and log prefixes are not inputs; values need a row of three.
        "300 steps: loss [0.5, 0.4, 0.3]",
        "2 GPUs: (8, 8)",
        "12:00:01 INFO: out (4, 8)",
        "2024-05-01 run: [1, 2, 3]",
        "1024 tokens: entropy [5.61, 5.63]",
        "epochs 3: [0.1, 0.2, 0.3]",
        "WARNING 3: (4, 8)",
    ] {
        assert!(!result_line(line), "{line}");
    }
}

#[test]
fn gradients_off_around_a_forward_show_inference() {
    let frames = script_frames(Some("pred = net(scans)"), true);
    let (phase, _) = read(
        &[
            "with torch.no_grad():",
            "Traceback (most recent call last):",
            OOM,
        ],
        &frames,
    )
    .expect("no_grad line");
    assert_eq!(phase, Phase::Inference);
    // The decorator's wrapper frame above the caller's statement.
    let mut frames = script_frames(Some("scores = runner(batch)"), true);
    frames.insert(
        1,
        frame(
            21,
            "decorate_context",
            "/venv/lib/python3.12/site-packages/torch/utils/_contextlib.py",
            Some("return func(*args, **kwargs)"),
        ),
    );
    frames[2].function = "score_all".to_string();
    assert_eq!(
        read(&["Traceback (most recent call last):", OOM], &frames).map(|(p, _)| p),
        Some(Phase::Inference)
    );
}

#[test]
fn training_shown_anywhere_cancels_the_forward_reading() {
    // A training loop whose forward is `out = model(x)` and `loss.backward()` shows elsewhere.
    let frames = script_frames(Some("out = model(x).softmax(-1)"), true);
    let read_training = read(
        &[
            "batch 1: out (2, 8)",
            "    loss.backward()",
            "Traceback (most recent call last):",
            OOM,
        ],
        &frames,
    );
    assert_ne!(read_training.map(|(p, _)| p), Some(Phase::Inference));
    // A result line that prints a loss is a training log.
    let frames = script_frames(Some("out = model(x)"), true);
    assert_eq!(
        read(
            &[
                "step 3: loss 0.2",
                "Traceback (most recent call last):",
                OOM
            ],
            &frames
        ),
        None
    );
}

#[test]
fn a_loop_over_inputs_printing_results_is_inference() {
    // The result printed after the loop's bar on the same line (`tqdm.write` under `\r`).
    let frames = script_frames(Some("areas = binary.flatten(1).sum(1)"), false);
    let (phase, why) = read(
        &[
            "scans:  50%|#####     | 1/2 [00:01<00:01,  1.2s/it]   scan 0: 7 regions, mean 410 px",
            "Traceback (most recent call last):",
            OOM,
        ],
        &frames,
    )
    .expect("a loop over inputs");
    assert_eq!(phase, Phase::Inference);
    assert!(why.contains("scan 0: 7 regions"), "{why}");
    // No bar still running (the bar at its total, or none), or no result line: nothing.
    for first in [
        "scans: 100%|##########| 2/2 [00:02<00:00,  1.2s/it]   scan 0: 7 regions, mean 410 px",
        "scan 0: 7 regions, mean 410 px",
        "scans:  50%|#####     | 1/2 [00:01<00:01,  1.2s/it]",
    ] {
        assert_eq!(
            read(&[first, "Traceback (most recent call last):", OOM], &frames),
            None,
            "{first}"
        );
    }
    // The same loop in a training run.
    assert_eq!(
        read(
            &[
                "epoch 1 loss 0.52",
                "scans:  50%|#####     | 1/2 [00:01<00:01,  1.2s/it]   scan 0: 7 regions",
                "Traceback (most recent call last):",
                OOM
            ],
            &frames
        ),
        None
    );
}

#[test]
fn gathering_outputs_after_a_loop_is_inference_with_result_lines() {
    let frames = script_frames(Some("embs = torch.cat(all_embeddings)"), false);
    let (phase, why) = read(
        &[
            "batch 7: 256 embeddings",
            "Traceback (most recent call last):",
            OOM,
        ],
        &frames,
    )
    .expect("gathered outputs");
    assert_eq!(phase, Phase::Inference);
    assert!(
        why.contains("gathers the outputs `all_embeddings`"),
        "{why}"
    );
    // Stacking inputs, or gathering with nothing else shown: nothing.
    let frames = script_frames(Some("batch = torch.stack(chunks)"), false);
    assert_eq!(
        read(
            &[
                "batch 7: 256 items",
                "Traceback (most recent call last):",
                OOM
            ],
            &frames
        ),
        None
    );
    let frames = script_frames(Some("embs = torch.cat(all_embeddings)"), false);
    assert_eq!(
        read(&["Traceback (most recent call last):", OOM], &frames),
        None
    );
}

#[test]
fn a_loss_statement_is_a_training_step() {
    for code in [
        "loss = F.cross_entropy(model(x), y)",
        "loss = model(**batch).loss",
        "loss, logits = compute(model, batch)",
    ] {
        let frames = script_frames(Some(code), true);
        let (phase, why) = read(&["Traceback (most recent call last):", OOM], &frames)
            .unwrap_or_else(|| panic!("{code}"));
        assert_eq!(phase, Phase::TrainingStep, "{code}");
        assert!(why.contains("no evaluation shown"), "{why}");
    }
    // Inside accelerate's gradient accumulation.
    let frames = script_frames(Some("outputs = model(**batch)"), true);
    let (phase, why) = read(
        &[
            "    with accelerator.accumulate(model):",
            "Traceback (most recent call last):",
            OOM,
        ],
        &frames,
    )
    .expect("accumulate");
    assert_eq!(phase, Phase::TrainingStep);
    assert!(why.contains("gradient accumulation"), "{why}");
}

#[test]
fn a_loss_in_an_evaluation_is_the_evaluations() {
    // A perplexity script, a no-grad block, an evaluation loop inside training: the loss an
    // evaluation reports (reading 3), never a training step.
    let inference = |found: Option<(Phase, String)>| found.map(|(phase, _)| phase);
    let frames = script_frames(Some("loss = model(ids, labels=ids).loss"), true);
    assert_eq!(
        read(
            &[
                "ppl so far: 12.4",
                "Traceback (most recent call last):",
                OOM
            ],
            &frames
        )
        .map(|(phase, _)| phase),
        Some(Phase::Inference)
    );
    assert_eq!(
        read(
            &[
                "with torch.no_grad():",
                "Traceback (most recent call last):",
                OOM
            ],
            &frames
        )
        .map(|(phase, _)| phase),
        Some(Phase::Inference)
    );
    let mut frames = script_frames(Some("loss = criterion(model(x), y)"), true);
    frames[1].function = "validate".to_string();
    assert_eq!(
        inference(read(&["Traceback (most recent call last):", OOM], &frames)),
        Some(Phase::Inference)
    );
    let frames = script_frames(Some("val_loss = criterion(model(x_val), y_val)"), true);
    assert_eq!(
        inference(read(&["Traceback (most recent call last):", OOM], &frames)),
        Some(Phase::Inference)
    );
    // A comparison, not an assignment.
    assert_eq!(loss_statement("if loss == best(x):"), None);
}

#[test]
fn odd_statements_do_not_panic() {
    for code in [
        "",
        "é = ü(",
        "x = (",
        "torch.argmax(",
        "y = model(x)[",
        "emb = torch.cat(",
        "loss =",
        "= model(x)",
        "ü.argmax(ü(é)).logits[:, -1]",
    ] {
        let frames = script_frames(Some(code), true);
        let _ = read(&["batch 1: out (2, 8)", "Traceback", OOM], &frames);
        let frames = script_frames(Some(code), false);
        let _ = read(&["batch 1: out (2, 8)", "Traceback", OOM], &frames);
        let _ = result_line(code);
    }
}

#[test]
fn an_asynchronous_kernel_error_reads_no_statement() {
    let frames = script_frames(Some("loss = F.binary_cross_entropy(probs, targets)"), true);
    let async_error = [
        "Traceback (most recent call last):",
        "torch.AcceleratorError: CUDA error: device-side assert triggered",
        "CUDA kernel errors might be asynchronously reported at some other API call, so the \
         stacktrace below might be incorrect.",
    ];
    assert_eq!(read(&async_error, &frames), None);
    let frames = script_frames(Some("seg = model(vol).argmax(1)"), true);
    assert_eq!(read(&async_error, &frames), None);
    // A failed allocation carries the same note under it, and is reported where it was asked.
    let allocation = [
        "Traceback (most recent call last):",
        "torch.AcceleratorError: CUDA error: out of memory",
        "CUDA kernel errors might be asynchronously reported at some other API call, so the \
         stacktrace below might be incorrect.",
    ];
    assert_eq!(
        read(&allocation, &frames).map(|(p, _)| p),
        Some(Phase::Inference)
    );
}

/// A compiled module's frames from dynamo down to the compiled code, with or without the
/// `autograd.Function` AOTAutograd wraps a training graph in.
fn compiled_frames(code: &str, training_graph: bool) -> Vec<Frame> {
    const SITE: &str = "/venv/lib/python3.12/site-packages/torch/";
    let mut frames = script_frames(Some(code), false);
    let mut push = |function: &str, file: &str| {
        let line = 30 + 2 * frames.len() as u64;
        frames.push(frame(
            line,
            function,
            &format!("{SITE}{file}"),
            Some("return f(x)"),
        ));
    };
    push("__call__", "_dynamo/eval_frame.py");
    push("_fn", "_dynamo/eval_frame.py");
    push("forward", "_functorch/aot_autograd.py");
    push(
        "runtime_wrapper",
        "_functorch/_aot_autograd/runtime_wrappers.py",
    );
    push(
        "call_func_at_runtime_with_args",
        "_functorch/_aot_autograd/utils.py",
    );
    if training_graph {
        push("apply", "autograd/function.py");
        push("forward", "_functorch/_aot_autograd/runtime_wrappers.py");
    }
    push("inner_fn", "_functorch/_aot_autograd/runtime_wrappers.py");
    push("__call__", "_inductor/output_code.py");
    frames
}

#[test]
fn a_compiled_module_run_on_its_inference_graph_is_inference() {
    let frames = compiled_frames("scores = runner(batch)", false);
    let (phase, why) =
        read(&["Traceback (most recent call last):", OOM], &frames).expect("inference graph");
    assert_eq!(phase, Phase::Inference);
    assert!(why.contains("inference graph"), "{why}");
    // The training graph (an `autograd.Function` frame): a bare call decides nothing.
    let frames = compiled_frames("scores = runner(batch)", true);
    assert_eq!(
        read(&["Traceback (most recent call last):", OOM], &frames),
        None
    );
    // TorchInductor's generated `call` below the compiled code is PyTorch's, not the
    // caller's: the caller's statement is still the one read.
    let mut frames = compiled_frames("scores = runner(batch)", false);
    frames.push(frame(
        90,
        "call",
        "/tmp/torchinductor_root/d6/cd6lc62bpuh62bq757omtgmc27n.py",
        Some("buf0 = empty_strided_cuda((262144, 16384), (16384, 1), torch.float16)"),
    ));
    let (phase, why) =
        read(&["Traceback (most recent call last):", OOM], &frames).expect("generated code");
    assert_eq!(phase, Phase::Inference);
    assert!(why.contains("scores = runner(batch)"), "{why}");
    // Frames cut before the compiled code: nothing to tell the graphs apart (a generic name).
    let mut frames = compiled_frames("y = runner(batch)", false);
    frames.truncate(frames.len() - 2);
    assert_eq!(
        read(&["Traceback (most recent call last):", OOM], &frames),
        None
    );
}

#[test]
fn an_interactive_session_that_only_runs_a_model_is_inference() {
    let frames = vec![
        frame(4, "<module>", "<stdin>", None),
        frame(
            5,
            "__call__",
            MODULE,
            Some("result = self.forward(*input, **kwargs)"),
        ),
        frame(
            7,
            "forward",
            LINEAR,
            Some("return F.linear(input, self.weight)"),
        ),
    ];
    let session = [
        ">>> net = MyNet().cuda()",
        ">>> out = net(x)",
        "Traceback (most recent call last):",
        "  File \"<stdin>\", line 1, in <module>",
        "  File \"/venv/torch/nn/modules/module.py\", line 532, in __call__",
        OOM,
    ];
    let (phase, why) = read(&session, &frames).expect("session");
    assert_eq!(phase, Phase::Inference);
    assert!(
        why.starts_with("line 2: your interactive session runs the model `net`"),
        "{why}"
    );
    // A session that trains, or whose last statement builds a tensor: nothing.
    let training = [
        ">>> loss = net(x).sum()",
        ">>> loss.backward()",
        "Traceback",
        OOM,
    ];
    assert_ne!(
        read(&training, &frames).map(|(p, _)| p),
        Some(Phase::Inference)
    );
    let tensor = [
        ">>> a = torch.zeros(1 << 30, device='cuda')",
        "Traceback",
        OOM,
    ];
    let frames = vec![frame(4, "<module>", "<stdin>", None)];
    assert_eq!(read(&tensor, &frames), None);
}

#[test]
fn an_evaluation_loop_inside_training_reads_only_its_loss() {
    // `train` → `evaluate` → the failing statement, with the training's lines before it.
    let frames_for = |code: &str| {
        vec![
            frame(10, "<module>", "/home/u/work/run.py", Some("train(cfg)")),
            frame(
                12,
                "train",
                "/home/u/work/run.py",
                Some("evaluate(model, val_loader)"),
            ),
            frame(14, "evaluate", "/home/u/work/run.py", Some(code)),
            frame(
                16,
                "_wrapped_call_impl",
                MODULE,
                Some("return self._call_impl(*a)"),
            ),
        ]
    };
    let lines = [
        "Epoch 1: loss 0.31",
        "batch 3: out (4, 10)",
        "Traceback (most recent call last):",
        OOM,
    ];
    // Its loss is the evaluation's (reading 3); a prediction read off it, with the training's
    // lines around, is neither reading.
    assert_eq!(
        read(&lines, &frames_for("loss = criterion(model(x), y)")).map(|(phase, _)| phase),
        Some(Phase::Inference)
    );
    assert_eq!(
        read(&lines, &frames_for("preds = model(x).argmax(1)")),
        None
    );
}

#[test]
fn context_lines_of_a_notebook_or_rich_traceback_are_read_as_source() {
    for line in [
        "      4 with torch.no_grad():",
        "----> 4 with torch.inference_mode():",
        "│   12 │     with torch.no_grad():",
        "@torch.no_grad()",
        "with no_grad():",
    ] {
        assert!(no_grad_line(line), "{line}");
    }
    for line in [
        "      4 x = torch.no_grad_fn",
        "print(torch.is_grad_enabled())",
        "torch.set_grad_enabled(True)",
    ] {
        assert!(!no_grad_line(line), "{line}");
    }
    let frames = script_frames(Some("outputs = model(**batch)"), true);
    let (phase, _) = read(
        &[
            "     41 with accelerator.accumulate(model):",
            "---> 42     outputs = model(**batch)",
            "Traceback (most recent call last):",
            OOM,
        ],
        &frames,
    )
    .expect("accumulate in a notebook's context lines");
    assert_eq!(phase, Phase::TrainingStep);
}
