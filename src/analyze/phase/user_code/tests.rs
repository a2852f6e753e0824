use super::*;

fn frame(line: u64, function: &str, file: &str, code: Option<&str>) -> Frame {
    Frame {
        line,
        function: function.to_string(),
        file: file.to_string(),
        called: false,
        code: code.map(str::to_string),
    }
}

#[test]
fn a_chat_call_generates() {
    assert_eq!(
        statement_phase("response, history = model.chat(tokenizer, query, history=[])")
            .map(|(p, _)| p),
        Some(Phase::Inference)
    );
    assert_eq!(
        statement_phase("outs = llm.chat(messages, sampling_params)").map(|(p, _)| p),
        Some(Phase::Inference)
    );
    assert_eq!(statement_phase("chat = build_chat(x)"), None);
}

#[test]
fn a_training_loop_named_with_its_evaluation() {
    assert_eq!(name_phase("train_and_evaluate"), Some(Phase::TrainingStep));
    assert_eq!(
        statement_phase("train_and_eval(rank, epoch, hps, [net_g, net_d])").map(|(p, _)| p),
        Some(Phase::TrainingStep)
    );
    // Both words without the loop's `and`: neither decides.
    assert_eq!(name_phase("train_eval_split"), None);
    assert_eq!(name_phase("evaluate_and_train"), None);
}

/// Flax's train state built before the first step is the model's weights placed (session 29,
/// openpi `init_train_state`).
#[test]
fn a_train_state_built_is_a_load() {
    for name in [
        "create_train_state",
        "init_train_state",
        "initializeTrainState",
    ] {
        assert_eq!(name_phase(name), Some(Phase::WeightsLoad), "{name}");
    }
    assert_eq!(
        statement_phase("state, sharding = init_train_state(config, rng, mesh)").map(|(p, _)| p),
        Some(Phase::WeightsLoad)
    );
    // The state used, not built, is the step's.
    assert_eq!(name_phase("train_state_step"), Some(Phase::TrainingStep));
    assert_eq!(name_phase("update_train_state"), Some(Phase::TrainingStep));
}

#[test]
fn library_files_are_told_from_the_callers() {
    for file in [
        "/usr/lib/python3.10/site-packages/torch/nn/modules/module.py",
        "/usr/local/lib/python3.8/dist-packages/vllm/worker.py",
        "/usr/lib/python3.10/runpy.py",
        "C:\\Python310\\lib\\runpy.py",
        "C:\\Users\\a\\venv\\Lib\\site-packages\\torch\\_tensor.py",
        "/opt/conda/bin/torchrun",
        "<frozen importlib._bootstrap>",
        "<string>",
        "/x/torch/lib/libtorch_cuda.so",
        // TorchInductor's generated code in its cache directory.
        "/tmp/torchinductor_root/d6/cd6lc62bpuh62bq757omtgmc27nvf.py",
        "C:\\Users\\me\\AppData\\Local\\Temp\\torchinductor_me\\ab\\cab12.py",
        // An engine's source checkout run in place.
        "/sgl-workspace/sglang/python/sglang/srt/managers/scheduler.py",
        "/workspace/vllm/vllm/v1/engine/core.py",
        "/home/me/transformers/src/transformers/trainer.py",
    ] {
        assert!(is_library_file(file), "{file}");
    }
    for file in [
        "train.py",
        "/home/me/project/train.py",
        "<stdin>",
        "<ipython-input-3-5d1f>",
        "/tmp/ipykernel_1234/3301.py",
        "<call>",
        "C:\\work\\ComfyUI\\execution.py",
        "/home/me/inductor_notes/run.py",
        "/tmp/oomdoc-corpus/serve_compiled.py",
        // A project folder named like an engine.
        "/home/me/vllm/serve.py",
    ] {
        assert!(!is_library_file(file), "{file}");
    }
}

#[test]
fn names_say_one_stage_or_none() {
    use Phase::*;
    for (name, phase) in [
        ("train_one_epoch", Some(TrainingStep)),
        ("trainEpoch", Some(TrainingStep)),
        ("run_epoch", Some(TrainingStep)),
        ("finetune", Some(TrainingStep)),
        ("validate", Some(Inference)),
        ("val_step", Some(Inference)),
        ("test_loop", Some(Inference)),
        ("generate_images", Some(Inference)),
        ("transcribe_file", Some(Inference)),
        ("load_model", Some(WeightsLoad)),
        ("build_model", Some(WeightsLoad)),
        ("setupModel", Some(WeightsLoad)),
        ("restore", Some(WeightsLoad)),
        // A training loop named with the evaluation it runs between steps.
        ("train_and_evaluate", Some(TrainingStep)),
        // Two stages at once, or none.
        ("val_epoch", None),
        ("load_model_for_training", None),
        ("forward", None),
        ("main", None),
        ("<module>", None),
        ("load_data", None),
        ("latest", None),
        ("sample_batch", None),
        ("encode", None),
        ("warmup_generate", None),
        ("compile_train_step", None),
        // A tensor built in a forward, not a generation.
        ("generate_qkv", None),
        ("generateMask", None),
        ("generate_text", Some(Inference)),
    ] {
        assert_eq!(name_phase(name), phase, "{name}");
    }
}

#[test]
fn free_words_name_one_stage_or_none() {
    use Phase::*;
    for (text, phase) in [
        (
            "request 7f3a failed while running the model",
            Some(Inference),
        ),
        ("Exception in thread Thread-3 (generate):", None),
        ("Error during generation:", Some(Inference)),
        ("Error in training loop at epoch 3:", Some(TrainingStep)),
        ("Failed to load model weights:", Some(WeightsLoad)),
        ("[train.py:88] ERROR: something broke", None),
        ("[inference_server][ERROR] - worker died", None),
        ("Error in src/train/loop.py:", None),
        ("error while capturing CUDA graphs for generation", None),
        ("failed to load the model during training", None),
        ("Finish task with error:", None),
    ] {
        assert_eq!(words_phase(text), phase, "{text}");
    }
    assert!(reports_error("request 7f3a failed while running the model"));
    assert!(reports_error("ERROR - Exception in worker"));
    assert!(!reports_error("Loading checkpoint shards: 100%"));
}

#[test]
fn library_names_need_plainer_words() {
    use Phase::*;
    for (name, phase) in [
        ("_do_train", Some(TrainingStep)),
        ("_engine_run_backward", Some(TrainingStep)),
        ("generate_with_fallback", Some(Inference)),
        ("_prepare_attention_mask_for_generation", Some(Inference)),
        ("_load_state_dict_into_meta_model", Some(WeightsLoad)),
        ("_load_pretrained_model", Some(WeightsLoad)),
        // Argument checks, format detection, builders and start-up stages say nothing.
        ("_validate_args", None),
        ("validate_environment", None),
        ("test_device", None),
        ("detect_format", None),
        ("build_model", None),
        ("_capture_generation_cuda_graphs", None),
        ("_dummy_sampler_run", None),
    ] {
        assert_eq!(library_name_phase(name), phase, "{name}");
    }
}

#[test]
fn statements_say_the_stage_they_run() {
    use Phase::*;
    for (code, phase) in [
        ("loss.backward()", Some(TrainingStep)),
        ("scaler.scale(loss).backward()", Some(TrainingStep)),
        ("accelerator.backward(loss)", Some(TrainingStep)),
        (
            "return Variable._execution_engine.run_backward(  # Calls into the C++ engine",
            Some(TrainingStep),
        ),
        ("model.register_full_backward_hook(hook)", None),
        (
            "return t.to(device, dtype if t.is_floating_point() or t.is_complex() else None, \
             non_blocking)",
            Some(WeightsLoad),
        ),
        ("x = t.to(device)", None),
        ("return t.to(", Some(WeightsLoad)),
        ("return t.to(x)", None),
        (
            "generator = pipeline('text-generation', model='gpt2',device=0)",
            Some(WeightsLoad),
        ),
        (
            "asr = transformers.pipeline(task=\"asr\", model=m)",
            Some(WeightsLoad),
        ),
        ("pipe = pipeline(\"summarization\")", Some(WeightsLoad)),
        (
            "output = pipe(messages, **generation_args)",
            Some(Inference),
        ),
        (
            "images = pipeline(\"a photo of a cat\").images",
            Some(Inference),
        ),
        (
            "out = generator(prompts, max_new_tokens=20)",
            Some(Inference),
        ),
        (
            "denom = (exp_avg_sq.sqrt() / bias_correction2_sqrt).add_(eps)",
            Some(TrainingStep),
        ),
        ("exp_avg.lerp_(grad, 1 - beta1)", Some(TrainingStep)),
        ("state[\"exp_avg\"] = torch.zeros_like(p)", None),
        ("self.optimizer.step()", Some(TrainingStep)),
        ("scaler.step(optimizer)", Some(TrainingStep)),
        (
            "for i, (x, y) in enumerate(train_loader):",
            Some(TrainingStep),
        ),
        ("for batch in tqdm(val_dataloader):", Some(Inference)),
        ("history = model.fit(x, y, epochs=3)", Some(TrainingStep)),
        (
            "trainer.train(resume_from_checkpoint=ckpt)",
            Some(TrainingStep),
        ),
        ("out = model.generate(**inputs)", Some(Inference)),
        ("print(trainer.evaluate())", Some(Inference)),
        (
            "image = pipe(prompt, num_inference_steps=30).images[0]",
            Some(Inference),
        ),
        (
            "predictions = generator(formatted_prompts, max_tokens=8)",
            Some(Inference),
        ),
        ("summary = summarizer(text)[0]", Some(Inference)),
        // A network's forward named like one (a GAN's generator, a detector's proposals).
        ("fake = self.generator(z)", None),
        (
            "proposals, losses = self.proposal_generator(images, features)",
            None,
        ),
        ("model = AutoModel.from_pretrained(path)", Some(WeightsLoad)),
        ("params = jax.device_put(host_params)", Some(WeightsLoad)),
        (
            "variables = jax.device_put(restored, sharding)",
            Some(WeightsLoad),
        ),
        ("batch = jax.device_put(batch)", None),
        ("x, y = jax.device_put((x, y), sharding)", None),
        ("model.load_state_dict(torch.load(p))", Some(WeightsLoad)),
        ("model = model.to(device)", Some(WeightsLoad)),
        ("self.unet.half().cuda()", Some(WeightsLoad)),
        ("net = MyNet(cfg).to(device)", Some(WeightsLoad)),
        // An input moved to the device, a forward, a scheduler: no stage of their own.
        ("x = x.to(device)", None),
        ("batch = {k: v.to(device) for k, v in batch.items()}", None),
        (
            "inputs = tokenizer(text, return_tensors='pt').to('cuda')",
            None,
        ),
        ("images = images.cuda(non_blocking=True)", None),
        ("t = torch.randn(8, 8).to(device)", None),
        ("out = model(x)", None),
        ("lr_scheduler.step()", None),
        ("model.train()", None),
        ("inner_training_loop()", Some(TrainingStep)),
        ("metrics = run_evaluation(model, loader)", Some(Inference)),
        ("pipe.load_lora_weights(path)", Some(WeightsLoad)),
        ("check = validate_args(cfg)", None),
        ("for epoch in range(epochs):", None),
        // Two stages in one statement decide nothing.
        ("loss = model(x).backward(); model.generate(x)", None),
    ] {
        assert_eq!(
            statement_phase(code).map(|(phase, _)| phase),
            phase,
            "{code}"
        );
    }
}

#[test]
fn innermost_user_frame_decides_statement_first() {
    let frames = [
        frame(1, "<module>", "train.py", Some("main()")),
        frame(3, "main", "train.py", Some("train(model, loader)")),
        frame(5, "train", "train.py", Some("evaluate(model, val_loader)")),
        frame(7, "evaluate", "train.py", Some("out = model(x)")),
        frame(
            9,
            "_call_impl",
            "/v/lib/python3.11/site-packages/torch/nn/modules/module.py",
            Some("return forward_call(*args, **kwargs)"),
        ),
    ];
    let (phase, why) = user_code_phase(&frames).unwrap();
    assert_eq!(phase, Phase::Inference);
    assert!(why.contains("your function `evaluate` (train.py)"), "{why}");

    let frames = [
        frame(1, "main", "/home/me/run.py", Some("run(cfg)")),
        frame(3, "run", "/home/me/run.py", Some("loss.backward()")),
    ];
    let (phase, why) = user_code_phase(&frames).unwrap();
    assert_eq!(phase, Phase::TrainingStep);
    assert!(
        why.starts_with("line 4: your code (me/run.py) runs `loss.backward()`"),
        "{why}"
    );
}

#[test]
fn a_loss_computed_is_a_training_step_unless_a_frame_says_otherwise() {
    let phase = |frames: &[Frame]| user_code_phase(frames).map(|(phase, _)| phase);
    let torch = |line: u64| {
        frame(
            line,
            "_call_impl",
            "/v/lib/python3.12/site-packages/torch/nn/modules/module.py",
            Some("return forward_call(*args, **kwargs)"),
        )
    };
    for code in [
        "loss = loss_fn(model, x.cuda(), y.cuda())",
        "l = criterion(out, target)",
        "total = self.compute_loss(batch)",
        "loss = ctc_loss(logits, labels)",
    ] {
        let frames = [frame(1, "<module>", "fit_me.py", Some(code)), torch(5)];
        assert_eq!(phase(&frames), Some(Phase::TrainingStep), "{code}");
        let (_, why) = user_code_phase(&frames).unwrap();
        assert!(why.contains("a loss computed"), "{why}");
    }
    // A loss kept as an evaluation's (session 18): no training step by itself.
    for code in [
        "val_loss = F.mse_loss(model(val_x), val_x)",
        "eval_loss = criterion(out, target)",
    ] {
        let frames = [frame(1, "<module>", "fit_me.py", Some(code)), torch(5)];
        assert_ne!(phase(&frames), Some(Phase::TrainingStep), "{code}");
    }
    // A function named for a loss, a module of a loss package.
    let named = [
        frame(4, "getLoss", "my/job.py", Some("h = net(x)")),
        torch(8),
    ];
    assert_eq!(phase(&named), Some(Phase::TrainingStep));
    let package = [
        frame(
            2,
            "forward",
            "/src/proj/losses/perceptual/vgg.py",
            Some("y = self.f(x)"),
        ),
        torch(6),
    ];
    assert_eq!(phase(&package), Some(Phase::TrainingStep));
    // An evaluation computes a loss too: its name decides; so does `no_grad`.
    let evaluation = [
        frame(1, "validate", "job.py", Some("run(x)")),
        frame(3, "step", "job.py", Some("val = criterion(out, y)")),
    ];
    assert_eq!(phase(&evaluation), Some(Phase::Inference));
    // Not a loss: a list of losses appended to, the losses read for logging.
    let logged = [frame(
        5,
        "get_current_losses",
        "models/base_model.py",
        Some("errors[name] = float(getattr(self, 'loss_' + name))"),
    )];
    assert_eq!(phase(&logged), None);
    let other = [frame(
        1,
        "<module>",
        "job.py",
        Some("losses.append(x.mean())"),
    )];
    assert_eq!(phase(&other), None);
}

#[test]
fn a_librarys_prediction_module_is_inference() {
    let frames = [
        frame(1, "<module>", "ocr_test.py", Some("result = ocr.ocr(path)")),
        frame(
            3,
            "__call__",
            r"C:\Python38\lib\site-packages\paddleocr\tools\infer\predict_system.py",
            Some("rec = self.text_recognizer(crops)"),
        ),
        frame(
            5,
            "__call__",
            "/v/lib/python3.10/site-packages/somepkg/predict_rec.py",
            Some("self.predictor.run([batch])"),
        ),
    ];
    let (phase, why) = user_code_phase(&frames).unwrap();
    assert_eq!(phase, Phase::Inference);
    assert!(why.contains("prediction module"), "{why}");
    assert!(inference_module("/x/site-packages/pkg/infer.py"));
    assert!(!inference_module(
        "/x/site-packages/onnxruntime/capi/onnxruntime_inference_collection.py"
    ));
    assert!(!inference_module("/x/site-packages/pkg/predictions.py"));
}

#[test]
fn a_trainers_test_loop_is_inference() {
    assert_eq!(
        statement_phase("results = trainer.test(model, datamodule=dm)").map(|(p, _)| p),
        Some(Phase::Inference)
    );
    assert_eq!(
        statement_phase("trainer.validate(model)").map(|(p, _)| p),
        Some(Phase::Inference)
    );
    // A test of something else names no stage.
    assert_eq!(statement_phase("suite.test(x)"), None);
}

#[test]
fn a_forward_given_the_labels_is_a_training_step_unless_a_frame_says_otherwise() {
    let script = |function: &str, code: &str| {
        vec![
            frame(1, "<module>", "run.py", Some("main()")),
            frame(3, function, "run.py", Some(code)),
        ]
    };
    let phase = |frames: &[Frame]| user_code_phase(frames).map(|(phase, _)| phase);
    for code in [
        "outputs = model(input_ids=batch, labels=batch)",
        "out = self.net(x, labels=y)",
        "loss = model(**inputs, labels = labels).loss",
        "return model.forward(ids, labels=ids)",
    ] {
        let frames = script("run_lora", code);
        assert_eq!(phase(&frames), Some(Phase::TrainingStep), "{code}");
        let (_, why) = user_code_phase(&frames).unwrap();
        assert!(why.contains("a forward given the labels"), "{why}");
    }
    // An evaluation computes the same loss: its name decides.
    assert_eq!(
        phase(&script(
            "evaluate",
            "outputs = model(input_ids=b, labels=b)"
        )),
        Some(Phase::Inference)
    );
    let mut nested = script("step", "outputs = model(input_ids=b, labels=b)");
    nested.insert(1, frame(2, "run_validation", "run.py", Some("step(b)")));
    assert_eq!(phase(&nested), Some(Phase::Inference));
    // Under a no_grad decorator's wrapper: an evaluation's loss, nothing decided.
    let mut decorated = script("run_lora", "outputs = model(input_ids=b, labels=b)");
    decorated.insert(
        1,
        frame(
            2,
            "decorate_context",
            "/venv/lib/python3.12/site-packages/torch/utils/_contextlib.py",
            Some("return func(*args, **kwargs)"),
        ),
    );
    assert_eq!(phase(&decorated), None);
    // A generation says its own stage.
    assert_eq!(
        phase(&script("run_lora", "out = model.generate(ids, labels=ids)")),
        Some(Phase::Inference)
    );
    // Not a forward given labels: a constructor, a comparison, data handling, no labels.
    for code in [
        "model = MyModel(config, labels=classes)",
        "if labels == None: model(x)",
        "batch = collate(samples, labels=labels)",
        "outputs = model(input_ids=batch)",
        "x = tokenizer(text, labels=y)",
    ] {
        assert_eq!(phase(&script("run_lora", code)), None, "{code}");
    }
}

#[test]
fn app_node_names_say_their_stage() {
    use Phase::*;
    for (name, phase) in [
        ("KSampler", Some(Inference)),
        ("SamplerCustomAdvanced", Some(Inference)),
        ("VAEDecode", Some(Inference)),
        ("VAEEncodeForInpaint", Some(Inference)),
        ("CLIPTextEncode", Some(Inference)),
        ("denoise_latents", Some(Inference)),
        ("anima_denoise", Some(Inference)),
        ("l2i", Some(Inference)),
        ("CheckpointLoaderSimple", Some(WeightsLoad)),
        ("UNETLoader", Some(WeightsLoad)),
        ("NunchakuQwenImageDiTLoader", Some(WeightsLoad)),
        ("main_model_loader", Some(WeightsLoad)),
        ("LoadCheckpoint", Some(WeightsLoad)),
        // A file read, no model; neither stage; both.
        ("LoadImage", None),
        ("ImageLoader", None),
        ("LoadLatent", None),
        ("SaveImage", None),
        ("ImageScale", None),
        ("SamplerLoader", None),
    ] {
        assert_eq!(node_phase(name), phase, "{name}");
    }
}

#[test]
fn the_node_an_app_names_at_the_failure_decides_last() {
    const OOM: &str = "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. \
GPU 0 has a total capacity of 23.65 GiB of which 1.12 GiB is free.";
    let phase_of = |text: &str| crate::analyze::explain::explain_text(text).phase;
    let invoke = format!(
        "[2026-09-19 21:45:44,454]::[InvokeAI]::ERROR --> Error while invoking session c39, \
         invocation 6d4 (denoise_latents): {OOM}\n"
    );
    let report = phase_of(&invoke);
    assert_eq!(report.failed_in, Phase::Inference, "{report:?}");
    assert!(
        report.evidence[0].contains("the app's node that raised it, `denoise_latents`"),
        "{report:?}"
    );
    let comfy = format!("Error occurred when executing CheckpointLoaderSimple:\n\n{OOM}\n");
    assert_eq!(phase_of(&comfy).failed_in, Phase::WeightsLoad);
    let report_form = format!("- **Node Type:** KSampler\n- **Exception Type:** x\n{OOM}\n");
    assert_eq!(phase_of(&report_form).failed_in, Phase::Inference);
    // An app's line naming the failure without its message, and the stage with it.
    let forge = "Encountered Out of Memory during Sampling; Unloading all Models...\n";
    assert_eq!(phase_of(forge).failed_in, Phase::Inference);
    let dialog = format!("UNETLoader\n{OOM}\n");
    assert_eq!(phase_of(&dialog).failed_in, Phase::WeightsLoad);
    // An image loader, an exception's class, a name far above: nothing.
    for text in [
        format!("LoadImage\n{OOM}\n"),
        format!("RuntimeError\n{OOM}\n"),
        format!("UNETLoader\none\ntwo\nthree\nfour\n{OOM}\n"),
    ] {
        assert_eq!(phase_of(&text).failed_in, Phase::Unknown, "{text}");
    }
}

#[test]
fn the_code_shown_above_an_error_without_frames_names_its_stage() {
    const OOM: &str = "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. \
GPU 0 has a total capacity of 23.65 GiB of which 1.12 GiB is free.";
    let phase_of = |text: &str| crate::analyze::explain::explain_text(text).phase;
    let snippet = format!(
        "If run this code:\n```python\noutputs = model.generate(**inputs, num_beams=2)\n```\n\
         Then OutofMemoryError occurs:\n```bash\n{OOM}\n```\n"
    );
    let report = phase_of(&snippet);
    assert_eq!(report.failed_in, Phase::Inference, "{report:?}");
    assert!(
        report.evidence[0].contains("the code shown just above the error"),
        "{report:?}"
    );
    let load = format!("```python\nm = keras_nlp.models.X.from_preset(\"gemma\")\n\n{OOM}\n```\n");
    assert_eq!(phase_of(&load).failed_in, Phase::WeightsLoad);
    // A sentence naming another stage in between stops the reading (the reporter's words
    // decide then).
    let between =
        format!("model = AutoModel.from_pretrained(p)\nthen when I run inference I get\n{OOM}\n");
    assert_eq!(phase_of(&between).failed_in, Phase::Inference);
    // A whole training run shows no stage by itself; code far above is not read.
    for text in [
        format!("trainer.fit(model, train_loader, val_loader)\n```\n\n```\n{OOM}\n"),
        format!("out = model.generate(x)\na\nb\nc\nd\ne\nf\n{OOM}\n"),
    ] {
        assert_eq!(phase_of(&text).failed_in, Phase::Unknown, "{text}");
    }
}

#[test]
fn pytest_test_functions_are_named_for_what_they_check() {
    let test = [frame(
        4,
        "test_set_memory_fraction",
        "test/test_xpu.py",
        Some("f(x)"),
    )];
    assert_eq!(user_code_phase(&test), None);
    let evaluation = [frame(4, "test_loop", "/home/me/tutorial.py", Some("f(x)"))];
    assert_eq!(
        user_code_phase(&evaluation).map(|(phase, _)| phase),
        Some(Phase::Inference)
    );
    // Its statement still counts.
    let backward = [frame(
        4,
        "test_grad",
        "test_autograd.py",
        Some("y.backward()"),
    )];
    assert_eq!(
        user_code_phase(&backward).map(|(phase, _)| phase),
        Some(Phase::TrainingStep)
    );
}

#[test]
fn an_input_move_leaves_the_stage_to_the_callers() {
    let moved = [frame(3, "step", "loop.py", Some("x = x.to(device)"))];
    assert_eq!(user_code_phase(&moved), None);
    let frames = [
        frame(1, "train_one_epoch", "loop.py", Some("step(x)")),
        frame(3, "step", "loop.py", Some("x = x.to(device)")),
    ];
    assert_eq!(
        user_code_phase(&frames).map(|(phase, _)| phase),
        Some(Phase::TrainingStep)
    );
}

#[test]
fn library_frames_and_called_frames_are_not_the_callers() {
    let frames = [
        frame(
            1,
            "run",
            "/v/lib/python3.11/site-packages/some_lib/loop.py",
            Some("loss.backward()"),
        ),
        Frame {
            called: true,
            ..frame(3, "train_epoch", "x.py", None)
        },
    ];
    assert_eq!(user_code_phase(&frames), None);
}

/// The statement under a printed frame reaches the decision through the explainer, under a
/// log prefix. (Like the calls read from it, a statement is read only when the frame's line
/// and the next one arrive in the same chunk of input.)
#[test]
fn the_explainer_keeps_the_statement_under_each_frame() {
    let text = "Traceback (most recent call last):\n\
[rank0]:   File \"/home/me/proj/train.py\", line 40, in <module>\n\
[rank0]:     main()\n\
[rank0]:   File \"/home/me/proj/train.py\", line 31, in main\n\
[rank0]:     loss.backward()\n\
[rank0]:   File \"/v/lib/python3.11/site-packages/torch/_tensor.py\", line 626, in _run_hooks\n\
[rank0]:     return handle(self)\n\
torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total \
capacity of 23.65 GiB of which 1.12 GiB is free.\n";
    let whole = crate::analyze::explain::explain_text(text);
    assert_eq!(
        whole.phase.failed_in,
        Phase::TrainingStep,
        "{:?}",
        whole.phase
    );
    assert!(
        whole
            .phase
            .evidence
            .iter()
            .any(|e| e.starts_with("line 5: your code (proj/train.py) runs `loss.backward()`")),
        "{:?}",
        whole.phase.evidence
    );
    // The same traceback moving an input: nothing shows the stage.
    let input = text.replace("loss.backward()", "x = x.to(device)");
    let report = crate::analyze::explain::explain_text(&input);
    assert_eq!(report.phase.failed_in, Phase::Unknown, "{:?}", report.phase);
}

/// The words next to a failure (read by `explain`'s report) when nothing else shows the
/// stage.
#[test]
fn the_words_next_to_the_failure_name_the_stage_last() {
    const OOM: &str = "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. \
GPU 0 has a total capacity of 23.65 GiB of which 1.12 GiB is free.";
    let phase_of = |text: &str| crate::analyze::explain::explain_text(text).phase;

    // `logger.exception`: the message above the traceback.
    let logged = format!(
        "[2026-12-01 17:13:31][server][ERROR] - request 7f3a failed while running the \
         model\nTraceback (most recent call last):\n  File \"/srv/app.py\", line 9, in \
         handle\n    out = model(x)\n{OOM}\n"
    );
    let report = phase_of(&logged);
    assert_eq!(report.failed_in, Phase::Inference, "{report:?}");
    assert!(
        report.evidence[0].starts_with(
            "line 1: the message logged with the traceback, `request 7f3a failed while \
             running the model`"
        ),
        "{report:?}"
    );
    // A line above the traceback that reports no error is not its message; when it is a
    // status line counting a stage's progress (a request and its id), that stage was
    // running (read as such, see `status_line_phase` in explain/assemble.rs).
    let info = logged
        .replace("[ERROR]", "[INFO]")
        .replace("request 7f3a failed while", "request 7f3a started");
    let report = phase_of(&info);
    assert_eq!(report.failed_in, Phase::Inference, "{report:?}");
    assert!(
        report.evidence[0].contains("status line printed just before it failed"),
        "{report:?}"
    );
    let info = logged.replace("[ERROR]", "[INFO]").replace(
        "request 7f3a failed while running the model",
        "cache of 3 blocks cleared",
    );
    assert_eq!(phase_of(&info).failed_in, Phase::Unknown);

    // A thread's target function, as `threading.excepthook` names it.
    let thread = format!(
        "Exception in thread Thread-3 (generate_reply):\nTraceback (most recent call \
         last):\n  File \"/srv/app.py\", line 9, in run\n    out = model(x)\n{OOM}\n"
    );
    assert_eq!(phase_of(&thread).failed_in, Phase::Inference);
    let plain = thread.replace("(generate_reply)", "(worker)");
    assert_eq!(phase_of(&plain).failed_in, Phase::Unknown);

    // The app's words introducing the error on its line; prose around it is not.
    let wrapped = format!("RuntimeError: Error during generation: {OOM}\n");
    assert_eq!(phase_of(&wrapped).failed_in, Phase::Inference);
    let prose = format!("when I send a chat request it fails with {OOM}\n");
    assert_eq!(phase_of(&prose).failed_in, Phase::Unknown);

    // A traceback pasted from its last statement: the statement above the error.
    let cut = format!(
        "    return Variable._execution_engine.run_backward(\n           ^^^^^^^^^^^^\n{OOM}\n"
    );
    assert_eq!(phase_of(&cut).failed_in, Phase::TrainingStep);
    let forward = cut.replace("Variable._execution_engine.run_backward(", "self.fc(x)");
    assert_eq!(phase_of(&forward).failed_in, Phase::Unknown);
}

/// A stage's progress bar left unfinished right above the traceback names the stage; a
/// finished one, or one whose description names no stage, does not.
#[test]
fn an_unfinished_progress_bar_above_the_traceback_names_the_stage() {
    let text = |bar: &str| {
        format!(
            "{bar}\nTraceback (most recent call last):\n  File \"/srv/x.py\", line 3, in run\n    \
             y = f(x)\ntorch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 \
             GiB. GPU 0 has a total capacity of 23.65 GiB of which 1.12 GiB is free.\n"
        )
    };
    let phase_of = |bar: &str| crate::analyze::explain::explain_text(&text(bar)).phase;
    let running = phase_of("Generating:   0%|          | 0/3 [00:19<?, ?it/s]");
    assert_eq!(running.failed_in, Phase::Inference, "{running:?}");
    assert!(running.evidence[0]
        .starts_with("line 1: the progress bar running when it failed, `Generating`"));
    assert_eq!(
        phase_of("Epoch 2:  40%|████      | 40/100 [00:19<00:30, 2.1it/s]").failed_in,
        Phase::TrainingStep
    );
    assert_eq!(
        phase_of("Loading checkpoint shards: 100%|██████████| 4/4 [00:06<00:00]").failed_in,
        Phase::Unknown
    );
    assert_eq!(
        phase_of("Map:  40%|████      | 40/100 [00:19<00:30, 2.1it/s]").failed_in,
        Phase::Unknown
    );
}

#[test]
fn statements_that_name_a_start_up_stage() {
    use Phase::*;
    for (code, phase) in [
        (
            "with torch.cuda.graph(g, pool=pool):",
            Some(CudaGraphCapture),
        ),
        (
            "step = torch.cuda.make_graphed_callables(step, (x,))",
            Some(CudaGraphCapture),
        ),
        ("g.capture_end()", Some(CudaGraphCapture)),
        (
            "model.resize_token_embeddings(len(tokenizer))",
            Some(FormatConversion),
        ),
        ("q, s = quantize_int8(layer.weight)", Some(FormatConversion)),
        ("sd[k] = convert_to_fp8(v.weight)", Some(FormatConversion)),
        ("ids = tokenizer.convert_tokens_to_ids(toks)", None),
        ("img = convert_rgb(img)", None),
        ("tensors[k] = f.get_tensor(k)", Some(WeightsLoad)),
        (
            "with safe_open(p, framework=\"pt\", device=\"cuda\") as f:",
            Some(WeightsLoad),
        ),
        (
            "sd = safetensors.torch.load_file(p, device=\"cuda\")",
            Some(WeightsLoad),
        ),
        ("out = interpreter.get_tensor(idx)", None),
        (
            "optimizer.load_state_dict(ckpt[\"optimizer\"])",
            Some(WeightsLoad),
        ),
        ("y = model(x)", None),
    ] {
        assert_eq!(statement_phase(code).map(|(p, _)| p), phase, "{code}");
    }
}

#[test]
fn gradios_event_dispatch_names_no_stage() {
    let gradio = frame(
        3,
        "call_prediction",
        "/venv/lib/python3.10/site-packages/gradio/queueing.py",
        Some("output = await route_utils.call_process_api("),
    );
    assert_eq!(user_code_phase(std::slice::from_ref(&gradio)), None);
    // Another library's function named for a prediction still reads as one.
    let other = frame(
        3,
        "call_prediction",
        "/venv/lib/python3.10/site-packages/myserve/queue.py",
        Some("return fn(x)"),
    );
    assert_eq!(
        user_code_phase(&[other]).map(|(phase, _)| phase),
        Some(Phase::Inference)
    );
}

#[test]
fn a_torch_nn_module_built_on_the_device_creates_weights() {
    for code in [
        "tables[name] = nn.EmbeddingBag(rows, DIM, mode=\"sum\", device=\"cuda\"",
        "self.proj = torch.nn.Linear(4096, 4096, device=device)",
    ] {
        assert_eq!(
            statement_phase(code).map(|(phase, _)| phase),
            Some(Phase::WeightsLoad),
            "{code}"
        );
    }
    // Not on a device, not a module, not torch.nn.
    assert_eq!(statement_phase("emb = nn.Embedding(rows, dim)"), None);
    assert_eq!(statement_phase("x = torch.zeros(4, device=\"cuda\")"), None);
    assert_eq!(statement_phase("net = MyNet(device=\"cuda\")"), None);
}
