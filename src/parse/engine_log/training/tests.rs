use super::super::parse_line_scan;

#[test]
fn frames_and_versions() {
    let facts = parse_line_scan("  File \"/usr/local/lib/python3.10/dist-packages/vllm/worker/model_runner.py\", line 1432, in capture_model");
    assert_eq!(
        facts.frame.as_ref().map(|f| f.0.as_str()),
        Some("capture_model")
    );
    let facts = parse_line_scan(
        "| NVIDIA-SMI 535.104.05   Driver Version: 535.104.05   CUDA Version: 12.2     |",
    );
    assert_eq!(
        facts.versions,
        vec![
            ("nvidia driver", "535.104.05".to_string()),
            ("cuda (driver)", "12.2".to_string())
        ]
    );
    let facts = parse_line_scan("PyTorch version: 2.3.0+cu121");
    assert_eq!(facts.versions, vec![("torch", "2.3.0+cu121".to_string())]);
}

fn frame_of(line: &str) -> Option<(String, String)> {
    parse_line_scan(line).frame
}

fn pair(function: &str, file: &str) -> Option<(String, String)> {
    Some((function.to_string(), file.to_string()))
}

/// A frame a console wrapped after `File` is read from its second line (TabbyAPI in
/// docker); a worker's "Error executing method X" names the frame X. See: issue 13.
#[test]
fn wrapped_and_worker_method_frames() {
    assert_eq!(
        frame_of(
            "\"/usr/local/lib/python3.10/dist-packages/exllamav2/linear.py\", line 138, in load"
        ),
        pair(
            "load",
            "/usr/local/lib/python3.10/dist-packages/exllamav2/linear.py"
        )
    );
    assert_eq!(
        frame_of("\"a quoted sentence\", line of text, in short"),
        None
    );
    assert_eq!(
            frame_of("(RayWorkerAphrodite pid=34320) ERROR:    Error executing method load_model. This might cause deadlock in distributed execution."),
            pair("load_model", "<worker method>")
        );
    assert_eq!(
            frame_of("(VllmWorkerProcess pid=614) ERROR 02-14 08:44:33 multiproc_worker_utils.py:242] Exception in worker VllmWorkerProcess while processing method start_worker_execution_loop."),
            pair("start_worker_execution_loop", "<worker method>")
        );
}

#[test]
fn frame_forms_seen_in_real_pastes() {
    // Prefixed standard frames.
    for line in [
            "(VllmWorkerProcess pid=1) ERROR 11-29 10:00:00 multiproc_worker_utils.py:233]   File \"/usr/lib/vllm/worker/worker.py\", line 5, in profile_run",
            "[rank3]:   File \"/usr/lib/vllm/worker/worker.py\", line 5, in profile_run",
            "[2025-01-01 10:00:00 TP0] File \"/usr/lib/vllm/worker/worker.py\", line 5, in profile_run",
            "ERROR:root:  File \"/usr/lib/vllm/worker/worker.py\", line 5, in profile_run",
            ">   File \"/usr/lib/vllm/worker/worker.py\", line 5, in profile_run",
            "> File \"/usr/lib/vllm/worker/worker.py\", line 5, in profile_run",
        ] {
            assert_eq!(
                frame_of(line),
                pair("profile_run", "/usr/lib/vllm/worker/worker.py"),
                "{line}"
            );
        }
    // Windows paths.
    assert_eq!(
        frame_of(
            r#"  File "C:\Users\u\miniconda3\Lib\site-packages\torch\nn\modules\module.py", line 1160, in to"#
        ),
        pair(
            "to",
            r"C:\Users\u\miniconda3\Lib\site-packages\torch\nn\modules\module.py"
        )
    );
    // IPython 8.
    assert_eq!(
            frame_of("File ~/miniconda3/lib/python3.10/site-packages/transformers/generation/utils.py:1576, in GenerationMixin.generate(self, inputs, **kwargs)"),
            pair("generate", "~/miniconda3/lib/python3.10/site-packages/transformers/generation/utils.py")
        );
    assert_eq!(
            frame_of("File /opt/conda/lib/python3.10/site-packages/torch/nn/modules/module.py:1145, in Module.to(self, *args, **kwargs)"),
            pair("to", "/opt/conda/lib/python3.10/site-packages/torch/nn/modules/module.py")
        );
    assert_eq!(frame_of("File not found, in the cache"), None);
    assert_eq!(
            frame_of("File [~/envs/q/lib/python3.11/site-packages/vllm/worker/cache_engine.py:49](http://host/lab/tree/x.py#line=48), in CacheEngine.__init__(self, cache_config)"),
            pair("__init__", "~/envs/q/lib/python3.11/site-packages/vllm/worker/cache_engine.py")
        );
    // IPython 7.
    assert_eq!(
            frame_of("~/anaconda3/lib/python3.8/site-packages/torch/nn/modules/module.py in _call_impl(self, *input, **kwargs)"),
            pair("_call_impl", "~/anaconda3/lib/python3.8/site-packages/torch/nn/modules/module.py")
        );
    assert_eq!(frame_of("the file x.py in my project"), None);
    // Jupyter's arrow on the cell's call.
    assert_eq!(
        frame_of("----> 1 out = model.generate(**inputs, max_new_tokens=50)"),
        pair("generate", "<call>")
    );
    assert_eq!(frame_of("---> 12 trainer.train()"), pair("train", "<call>"));
    assert_eq!(frame_of("---> there is no call"), None);
    // IPython pads its arrow to five columns: `--> 122` (session 54).
    assert_eq!(
        frame_of("--> 122     model = Tacotron2(hparams).cuda()"),
        pair("Tacotron2", "<call>")
    );
    assert_eq!(
        frame_of("it went from step 1 -> 2 model.cuda() and then"),
        None
    );
    assert_eq!(frame_of("a --> 12 b(c)"), None);
    // A notebook's own function (IPython 7, 8.0–8.5, 8.6+); the cell's code is no frame.
    assert_eq!(
        frame_of("<ipython-input-7-e3d97036c5f7> in load_model(hparams)"),
        pair("load_model", "<ipython-input-7-e3d97036c5f7>")
    );
    assert_eq!(
        frame_of("Input In [7], in load_model(hparams)"),
        pair("load_model", "Input In [7]")
    );
    assert_eq!(
        frame_of("Cell In[7], line 122, in load_model(hparams)"),
        pair("load_model", "Cell In[7]")
    );
    assert_eq!(
        frame_of("<ipython-input-21-e8a871a0e98d> in <module>()"),
        None
    );
    assert_eq!(frame_of("Input In [3], in <cell line: 2>()"), None);
    assert_eq!(frame_of("Cell In[7], line 4"), None);
    // Rich (Lightning, Typer).
    assert_eq!(
            frame_of("\u{2502} /opt/conda/lib/python3.10/site-packages/lightning/pytorch/loops/fit_loop.py:355 in advance           \u{2502}"),
            pair("advance", "/opt/conda/lib/python3.10/site-packages/lightning/pytorch/loops/fit_loop.py")
        );
    assert_eq!(
        frame_of("\u{2502} \u{2771} 44 \u{2502}   return trainer_fn(*args, **kwargs)  \u{2502}"),
        None
    );
    // Its padding dropped by a narrow console (SD.Next's log).
    assert_eq!(
        frame_of("\u{2502}/srv/sdnext/modules/processing_diffusers.py:187 in process_base"),
        pair(
            "process_base",
            "/srv/sdnext/modules/processing_diffusers.py"
        )
    );
    assert_eq!(frame_of("\u{2502}/srv/data \u{2502} 187 rows"), None);
}

#[test]
fn progress_bars_with_a_loss_are_training_steps() {
    use crate::model::explain::EventKind;
    let step = |line: &str| {
        parse_line_scan(line)
            .events
            .iter()
            .any(|event| event.kind == EventKind::TrainingStep)
    };
    assert!(step(
        " 45%|████▌     | 450/1000 [02:15<02:45,  3.32it/s, loss=0.523]"
    ));
    assert!(step(
        "Epoch 0:  10%|█         | 5/50 [00:01<00:10,  4.20it/s, v_num=0, train_loss=1.230]"
    ));
    assert!(step(
        "100/1875 [>.............................] - ETA: 1:23 - loss: 2.3011"
    ));
    assert!(!step(
        "Validation DataLoader 0:  50%|█████     | 5/10 [00:01<00:01,  4.20it/s, val_loss=1.2]"
    ));
    assert!(!step("the loss=0.5 was fine"));
    // tqdm with the caller's own unit, both rate forms
    assert!(step(
        "pretrain:  67%|██████▋   | 16/24 [00:00<00:00, 35.84micro-batch/s, loss=1.2925]"
    ));
    assert!(step(" 3/90 [00:09<04:21,  3.01s/batch, loss=2.3]"));
    assert!(!step("loss=0.5 [see the 1.5x/s note]"));
    assert!(!step(
        "Validation: 50%|█████     | 5/10 [00:01<00:01,  4.20batch/s, val_loss=1.2]"
    ));
    assert!(step("iter 3436 step 53: loss 2.9911, iter time: 400.10ms"));
    assert!(step("iter 12 | step 3: loss 1.5000, iter time: 80.00 ms"));
    assert!(step(
        "2026-12-01 17:13:23,501 INFO train: step 0 batch 4096 loss 1.0394"
    ));
    assert!(step("Epoch 3 Step 120: loss: 0.52"));
    assert!(step("[iter 800] Loss 2.31"));
    assert!(!step("the loss was 0.5 after a while"));
    assert!(!step("step 3: eval_loss 0.5"));
    assert!(!step("stepping down: loss 0.5"));
    // An iteration number and a loss: a hand-written loop's step line.
    assert!(step("iter 3436: loss 2.9911"));
    // Lightning's training bar needs no loss in its postfix; other bars named `Epoch` do.
    assert!(step(
        "Epoch 0:  62%|██████▏   | 878/1417 [00:15<00:09, 56.28it/s]"
    ));
    assert!(!step("Epoch 3/10 done"));
}

#[test]
fn deepspeed_launcher_records_name_deepspeed() {
    let engine = |line: &str| parse_line_scan(line).engine.map(|(name, _)| name);
    assert_eq!(
            engine("[2023-07-04 17:31:27,755] [INFO] [launch.py:315:sigkill_handler] Killing subprocess 953850"),
            Some(crate::model::failure::EngineName::Deepspeed)
        );
    assert_eq!(engine("[launch.py:12:helper] something"), None);
}

#[test]
fn text_generation_webui_output_line_is_a_generation() {
    let late = |line: &str| parse_line_scan(line).late_phase;
    assert_eq!(
        late("Output generated in 6.34 seconds (0.32 tokens/s, 2 tokens, context 1200, seed 42)"),
        Some(crate::model::explain::Phase::Inference)
    );
    assert_eq!(late("Output generated in the folder"), None);
}

#[test]
fn detection_bars_xla_programs_and_keras_training_nodes_show_the_stage() {
    let late = |line: &str| parse_line_scan(line).late_phase;
    let training = Some(crate::model::explain::Phase::TrainingStep);
    // ultralytics / YOLOv5 training bar: epoch counter, GPU memory, losses.
    assert_eq!(
            late("     0/299     15.8G      3.99     0.358         0      4.35        22       608:  63% 34/54 [00:42<00:25,  1.26s/it]"),
            training
        );
    assert_eq!(
            late("      1/100      2.61G      1.234      2.345      1.456         12        640: 100%|██████████| 8/8 [00:02<00:00,  3.21it/s]"),
            training
        );
    // The validation bar has no epoch counter or memory column: not a training batch, but
    // the validator running (`framework_bar`).
    assert_eq!(
            late("                 Class     Images  Instances      Box(P          R      mAP50  mAP50-95):  50%|█████     | 2/4 [00:01<00:01,  1.50it/s]"),
            Some(crate::model::explain::Phase::Inference)
        );
    assert_eq!(
            late("jax.errors.JaxRuntimeError: RESOURCE_EXHAUSTED: Out of memory while trying to allocate 12.00GiB with allocator GPU_0_bfc on device 0. [executable_name='jit_train_step']"),
            training
        );
    assert_eq!(
        late("[executable_name='jit_sample_tokens']"),
        Some(crate::model::explain::Phase::Inference)
    );
    assert_eq!(late("[executable_name='jit_fn']"), None);
    // A step or an update alone: a training step; a step of something else: nothing.
    assert_eq!(late("[executable_name='jit_step']"), training);
    assert_eq!(late("[executable_name='jit_update']"), training);
    assert_eq!(late("[executable_name='jit_render_step']"), None);
    assert_eq!(
        late("[executable_name='jit_sample_step']"),
        Some(crate::model::explain::Phase::Inference)
    );
    assert_eq!(
        late("\t [[GroupCrossDeviceControlEdges_0/training/Adam/Adam/Const/_343]]"),
        training
    );
    assert_eq!(
        late("\t [[Node: training_10/Adam/mul_23 = Mul[T=DT_FLOAT]()]]"),
        training
    );
    // A retyped, lowercased optimizer scope.
    assert_eq!(
        late("[[{{node training/adam/mul_73}} Mul[T=DT_float]"),
        training
    );
    assert_eq!(late("[[{{node training/augment/flip_3}}]]"), None);
    assert_eq!(
        late("\t [[{{node batch_normalization_v2/cond/then/_0/FusedBatchNorm}}]]"),
        None
    );
    // A path with `training/` is not a graph node.
    assert_eq!(
        late("  File \"/x/chainer/training/trainer.py\", line 3, in run"),
        None
    );
}

#[test]
fn a_notebook_arrow_closing_a_keras_fit_call_is_fit() {
    let frame = |line: &str| parse_line_scan(line).frame;
    assert_eq!(
        frame("----> 5                     epochs=n_epochs)"),
        Some(("fit".to_string(), "<call>".to_string()))
    );
    assert_eq!(
        frame("----> 5     steps_per_epoch=10, validation_data=val)"),
        Some(("fit".to_string(), "<call>".to_string()))
    );
    // Not a closing line, or not fit's keywords.
    assert_eq!(frame("----> 5     epochs=n_epochs,"), None);
    assert_eq!(frame("----> 5     max_epochs=3)"), None);
    assert_eq!(frame("----> 5     batch_size=8)"), None);
}

#[test]
fn pytest_frames() {
    assert_eq!(
            frame_of("  .venv/lib/python3.14/site-packages/transformers/trainer.py:1742: in _inner_training_loop"),
            pair("_inner_training_loop", ".venv/lib/python3.14/site-packages/transformers/trainer.py")
        );
    assert_eq!(frame_of("see site-packages/x.py:12: in the docs"), None);
}
