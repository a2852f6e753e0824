use super::*;
use crate::model::explain::PhaseReport;

fn lines(texts: &[&str]) -> Vec<ContextLine> {
    texts
        .iter()
        .enumerate()
        .map(|(at, text)| ContextLine {
            line: at as u64 + 1,
            text: (*text).to_string(),
        })
        .collect()
}

fn event(kind: EventKind, line: u64) -> TimelineEvent {
    TimelineEvent {
        kind,
        phase: Phase::Unknown,
        line,
        timestamp: None,
        seconds_since_start: None,
        stream: None,
        figures: Default::default(),
        count: 1,
        last_line: None,
        text: String::new(),
        t_ms: None,
    }
}

fn frame(line: u64, function: &str, file: &str, code: Option<&str>) -> Frame {
    Frame {
        line,
        function: function.to_string(),
        file: file.to_string(),
        called: false,
        code: code.map(str::to_string),
    }
}

/// The evidence for the text's failure, which is its line holding `OOM`.
fn read(
    texts: &[&str],
    events: &[TimelineEvent],
    frames: &[Frame],
    engine: EngineName,
) -> Option<String> {
    let owned = lines(texts);
    let refs: Vec<&ContextLine> = owned.iter().collect();
    let failure_line = owned
        .iter()
        .find(|line| line.text.contains("OOM"))
        .map_or(0, |line| line.line);
    evidence(&InferenceInputs {
        failure_line,
        lines: &refs,
        events,
        frames,
        engine,
        host_memory: false,
    })
}

const OOM: &str = "torch.OutOfMemoryError: OOM: Tried to allocate 2.00 GiB";

#[test]
fn a_request_to_an_inference_endpoint_shows_inference() {
    let why = read(
        &[
            "10:01:02 INFO  POST /v1/chat/completions 200 OK",
            "Traceback (most recent call last):",
            OOM,
        ],
        &[],
        &[],
        EngineName::Pytorch,
    )
    .expect("a request before the failure");
    assert!(
        why.contains("line 1: a request to `/v1/chat/completions`"),
        "{why}"
    );
    assert!(why.contains("line 3: the failure came after it"), "{why}");
    // On the failure's own line, with a full URL.
    let why = read(
        &[&format!(
            "ERROR API error: POST: http://127.0.0.1:7860/sdapi/v1/img2img {{'errors': '{OOM}'}}"
        )],
        &[],
        &[],
        EngineName::Automatic1111,
    )
    .expect("the request on the failure's line");
    assert!(why.contains("`/sdapi/v1/img2img`"), "{why}");
    // An access line under the failure that reports it failed.
    let why = read(
        &[OOM, "INFO:     127.0.0.1:50312 - \"POST /api/v1/generate HTTP/1.1\" 500 Internal Server Error"],
        &[],
        &[],
        EngineName::Pytorch,
    )
    .expect("a failed request under the failure");
    assert!(
        why.contains("line 2: the request to `/api/v1/generate`"),
        "{why}"
    );
}

#[test]
fn requests_that_load_or_poll_or_succeed_after_show_nothing() {
    for text in [
        "POST /sdapi/v1/options HTTP/1.1 200",
        "POST: http://127.0.0.1:7860/internal/progress",
        "[GIN] 200 | POST \"/api/pull\"",
        "POSTGRES /v1/completions",
        "GET /v1/models 200",
    ] {
        assert_eq!(
            read(&[text, OOM], &[], &[], EngineName::Pytorch),
            None,
            "{text}"
        );
    }
    // Answered fine after the failure: not the request that failed.
    assert_eq!(
        read(
            &[OOM, "\"POST /v1/completions HTTP/1.1\" 200 OK"],
            &[],
            &[],
            EngineName::Vllm
        ),
        None
    );
    // ollama loads the model a request asks for: its failed access line may be a load.
    assert_eq!(
        read(
            &[OOM, "[GIN] | 500 | POST \"/api/chat\""],
            &[],
            &[],
            EngineName::Ollama
        ),
        None
    );
    // The reporter's sentence naming the endpoint is no log line.
    assert_eq!(
        read(
            &[&format!(
                "a request to POST /v1/chat/completions returns {OOM}"
            )],
            &[],
            &[],
            EngineName::Llamacpp
        ),
        None
    );
}

#[test]
fn endpoints_are_read_from_paths_and_urls() {
    assert_eq!(
        request_endpoint("POST /generate_stream HTTP/1.1"),
        Some("/generate_stream")
    );
    assert_eq!(
        request_endpoint("\"POST /v2/models/ensemble/infer HTTP/1.1\""),
        Some("/v2/models/ensemble/infer")
    );
    assert_eq!(
        request_endpoint("POST https://host:8443/openai/v1/embeddings?x=1"),
        Some("/openai/v1/embeddings")
    );
    assert_eq!(request_endpoint("POST /v1/load_lora_adapter"), None);
    assert_eq!(request_endpoint("POST"), None);
    assert_eq!(
        request_endpoint("POST é/v1/completions"),
        Some("/v1/completions")
    );
}

#[test]
fn a_samplers_bar_in_an_image_app_shows_inference() {
    let why = read(
        &[
            "Model loaded in 4.1s (load weights from disk: 0.6s).",
            "100%|██████████| 20/20 [00:05<00:00,  3.91it/s]",
            "[Unload] Trying to free 1024.00 MB for cuda:0 ... Done.",
            OOM,
        ],
        &[],
        &[],
        EngineName::Automatic1111,
    )
    .expect("a sampler's bar");
    assert!(
        why.contains("line 2: a progress bar of a sampler's"),
        "{why}"
    );
    // A labelled bar names the generation in any engine.
    let why = read(
        &["Transcribing:  40%|████      | 4/10 [00:09<00:13]", OOM],
        &[],
        &[],
        EngineName::Pytorch,
    )
    .expect("a labelled bar");
    assert!(why.contains("`Transcribing`"), "{why}");
}

#[test]
fn bars_that_load_or_train_or_come_bare_elsewhere_show_nothing() {
    // A bare bar outside an image app: any loop.
    assert_eq!(
        read(
            &[" 45%|████▌     | 9/20 [00:05<00:07]", OOM],
            &[],
            &[],
            EngineName::Pytorch
        ),
        None
    );
    // A load after the bar: the next generation's model being loaded.
    assert_eq!(
        read(
            &[
                "100%|██████████| 20/20 [00:05<00:00]",
                "Requested to load AutoencoderKL",
                "Loading 1 new model",
                OOM,
            ],
            &[],
            &[],
            EngineName::Comfyui,
        ),
        None
    );
    // A training bar (a loss on it) is no generation.
    assert_eq!(
        read(
            &[
                "Steps:  10%|█         | 100/1000 [01:40<15:00, loss=0.12]",
                OOM
            ],
            &[],
            &[],
            EngineName::Diffusers,
        ),
        None
    );
    // Loading checkpoint shards is a load, not a generation.
    assert_eq!(
        read(
            &[
                "Loading checkpoint shards: 100%|███| 3/3 [00:06<00:00]",
                OOM
            ],
            &[],
            &[],
            EngineName::Transformers
        ),
        None
    );
}

#[test]
fn a_finished_start_up_of_a_serving_app_shows_inference() {
    let texts = ["INFO: ready to serve", "some line", OOM];
    let why = read(
        &texts,
        &[event(EventKind::ServerReady, 1)],
        &[],
        EngineName::Sglang,
    )
    .expect("a server ready before the failure");
    assert!(why.contains("line 1: the API accepts requests"), "{why}");
    let why = read(
        &texts,
        &[event(EventKind::WeightsLoaded, 1)],
        &[],
        EngineName::Automatic1111,
    )
    .expect("an image app's model loaded");
    assert!(why.contains("the model is loaded"), "{why}");
}

#[test]
fn a_start_up_still_running_or_a_training_app_shows_nothing() {
    let texts = ["Model loaded", "Loading weights from x", OOM];
    // Another load started after the ready line.
    assert_eq!(
        read(
            &texts,
            &[
                event(EventKind::ServerReady, 1),
                event(EventKind::WeightsLoadStart, 2)
            ],
            &[],
            EngineName::Vllm,
        ),
        None
    );
    // An LLM engine's weights loaded: profiling and the KV cache come next.
    assert_eq!(
        read(
            &texts,
            &[event(EventKind::WeightsLoaded, 1)],
            &[],
            EngineName::Vllm
        ),
        None
    );
    // A library that trains as well as it serves.
    assert_eq!(
        read(
            &texts,
            &[event(EventKind::EngineReady, 1)],
            &[],
            EngineName::Transformers
        ),
        None
    );
    // A training line anywhere in the run.
    assert_eq!(
        read(
            &texts,
            &[
                event(EventKind::ServerReady, 1),
                event(EventKind::TrainingStep, 2)
            ],
            &[],
            EngineName::Vllm,
        ),
        None
    );
    // A text cut before the failure: the ready line is not before it.
    assert_eq!(
        read(
            &[OOM, "Application startup complete"],
            &[event(EventKind::ServerReady, 2)],
            &[],
            EngineName::Vllm
        ),
        None
    );
}

#[test]
fn an_entry_script_named_for_running_a_model_shows_inference() {
    let frames = [
        frame(
            2,
            "<module>",
            "/home/u/proj/scripts/infer_sd.py",
            Some("main(args)"),
        ),
        frame(
            4,
            "main",
            "/home/u/proj/scripts/infer_sd.py",
            Some("out = model(x)"),
        ),
        frame(
            6,
            "forward",
            "/usr/lib/python3/site-packages/torch/nn/modules/conv.py",
            None,
        ),
    ];
    let why = read(
        &["Traceback", "", "", "", "", "", OOM],
        &[],
        &frames,
        EngineName::Pytorch,
    )
    .expect("an inference script");
    assert!(why.contains("entry script scripts/infer_sd.py"), "{why}");
    // The shell line that ran it.
    let why = read(
        &["$ python3 tools/predict.py --input a.jpg", OOM],
        &[],
        &[],
        EngineName::Pytorch,
    )
    .expect("a command running a prediction script");
    assert!(why.contains("runs `predict.py`"), "{why}");
    // A host-memory failure of such a script: its checkpoint and data take host memory too.
    let owned = lines(&["$ python3 tools/predict.py --input a.jpg", OOM]);
    let refs: Vec<&ContextLine> = owned.iter().collect();
    let host = InferenceInputs {
        failure_line: 2,
        lines: &refs,
        events: &[],
        frames: &frames,
        engine: EngineName::Pytorch,
        host_memory: true,
    };
    assert_eq!(evidence(&host), None);
}

#[test]
fn training_scripts_and_tests_show_nothing() {
    for name in [
        "train.py",
        "demo_train.py",
        "finetune_demo.py",
        "test_training.py",
        "trainer.py",
        "test_xpu.py",
        "model_test.py",
    ] {
        assert!(!inference_script(name), "{name}");
    }
    for name in [
        "infer.py",
        "run_inference.py",
        "demo2.py",
        "sample-images.py",
        "test.py",
        "eval_coco.py",
    ] {
        assert!(inference_script(name), "{name}");
    }
    // A training statement under the inference-named entry.
    let frames = [
        frame(2, "<module>", "/p/demo.py", Some("run()")),
        frame(4, "run", "/p/demo.py", Some("loss.backward()")),
    ];
    assert_eq!(
        read(&["", "", "", "", OOM], &[], &frames, EngineName::Pytorch),
        None
    );
    // A pytest run of a test file.
    let frames = [
        frame(
            2,
            "main",
            "/v/site-packages/_pytest/config/__init__.py",
            None,
        ),
        frame(4, "<module>", "/p/test_model.py", Some("model(x)")),
    ];
    assert_eq!(
        read(&["", "", "", "", OOM], &[], &frames, EngineName::Pytorch),
        None
    );
    // A command training with a script of another name.
    assert_eq!(
        read(
            &["python run.py --do_train --model x", OOM],
            &[],
            &[],
            EngineName::Pytorch
        ),
        None
    );
    assert_eq!(
        read(
            &["python eval.py --model x", "epoch 3: loss 0.2", OOM],
            &[],
            &[],
            EngineName::Pytorch
        ),
        None
    );
    // A demo that builds an engine first: the builder's tactics are no model run.
    assert_eq!(
        read(
            &[
                "python3 demo_txt2img.py --build",
                "[E] skipping tactic 0x0 due to exception",
                OOM
            ],
            &[],
            &[],
            EngineName::Other,
        ),
        None
    );
}

#[test]
fn fill_unknown_keeps_a_decided_phase_and_never_panics() {
    let mut report = PhaseReport {
        failed_in: Phase::WeightsLoad,
        ..Default::default()
    };
    let owned = lines(&["POST /v1/completions", OOM]);
    let refs: Vec<&ContextLine> = owned.iter().collect();
    let inputs = InferenceInputs {
        failure_line: 2,
        lines: &refs,
        events: &[],
        frames: &[],
        engine: EngineName::Vllm,
        host_memory: false,
    };
    fill_unknown(&mut report, &inputs);
    assert_eq!(report.failed_in, Phase::WeightsLoad);
    let mut report = PhaseReport::default();
    fill_unknown(&mut report, &inputs);
    assert_eq!(report.failed_in, Phase::Inference);
    assert_eq!(report.prompt_can_be_cause, Some(true));
    for text in [
        "POST",
        "POST /",
        "POST http://",
        "é%|",
        "%|1/",
        "ü100%|██| 2/2",
        "python",
        "python ü.py",
    ] {
        let _ = read(&[text, OOM], &[], &[], EngineName::Comfyui);
    }
}

#[test]
fn an_apps_line_of_a_run_or_of_a_run_done_shows_inference() {
    let why = read(
        &["Processing audio with duration 01:02.500", "Traceback", OOM],
        &[],
        &[],
        EngineName::Ctranslate2,
    )
    .expect("a transcription running");
    assert!(why.contains("line 1: faster-whisper"), "{why}");
    let why = read(
        &[
            "video 1/1 (frame 12/300) /data/a.mp4: 384x640 2 persons, 9.1ms",
            OOM,
        ],
        &[],
        &[],
        EngineName::Ultralytics,
    )
    .expect("a prediction running");
    assert!(why.contains("Ultralytics"), "{why}");
    let why = read(
        &[
            "Output generated in 6.34 seconds (9.3 tokens/s, 59 tokens, context 12, seed 1)",
            OOM,
        ],
        &[],
        &[],
        EngineName::Other,
    )
    .expect("a generation done before");
    assert!(why.contains("the app was serving"), "{why}");
    let why = read(
        &["* Running on local URL:  http://127.0.0.1:7860", OOM],
        &[],
        &[],
        EngineName::Other,
    )
    .expect("a gradio UI up");
    assert!(why.contains("gradio"), "{why}");
}

#[test]
fn an_apps_line_then_a_load_or_training_shows_nothing() {
    // A load after it: the next prompt's model being loaded.
    assert_eq!(
        read(
            &[
                "Prompt executed in 12.31 seconds",
                "got prompt",
                "Requested to load SDXL",
                OOM
            ],
            &[],
            &[],
            EngineName::Comfyui,
        ),
        None
    );
    // A new prompt after a run done, or the models unloaded: the next run may load them.
    assert_eq!(
        read(
            &["Prompt executed in 12.31 seconds", "got prompt", OOM],
            &[],
            &[],
            EngineName::Comfyui
        ),
        None
    );
    assert_eq!(
        read(
            &[
                "Output generated in 6.34 seconds",
                "Unloading all models",
                OOM
            ],
            &[],
            &[],
            EngineName::Other
        ),
        None
    );
    // A training GUI: its training lines cancel the UI's start.
    assert_eq!(
        read(
            &[
                "Running on local URL:  http://0.0.0.0:7860",
                "epoch 1, step 10: loss 0.3",
                OOM
            ],
            &[],
            &[],
            EngineName::Other,
        ),
        None
    );
    // A dataset line is no prediction line.
    assert!(!prediction_line("image size 640/480"));
    assert!(!prediction_line("video 1/x a: b"));
    assert!(prediction_line("image 3/10 /p/a.jpg: 640x480 1 bus, 5.0ms"));
}

#[test]
fn a_chat_program_that_loaded_its_model_then_failed_was_answering() {
    let texts = [
        "$ python3 -m fastchat.serve.cli --model-path m/",
        "Loading checkpoint shards: 100%|███| 3/3 [00:06<00:00]",
        "USER: hello",
        OOM,
    ];
    let why = read(
        &texts,
        &[event(EventKind::WeightsLoaded, 2)],
        &[],
        EngineName::Transformers,
    )
    .expect("a chat program's model loaded");
    assert!(why.contains("`fastchat.serve.cli`"), "{why}");
    // Still loading: no stage completed.
    assert_eq!(
        read(
            &texts,
            &[event(EventKind::WeightsLoadProgress, 2)],
            &[],
            EngineName::Transformers
        ),
        None
    );
    // A module that trains.
    assert_eq!(
        read(
            &[
                "python -m llava.train.train_mem",
                "Loading checkpoint shards: 100%",
                OOM
            ],
            &[event(EventKind::WeightsLoaded, 2)],
            &[],
            EngineName::Transformers,
        ),
        None
    );
    // The same load without a serving program: a training script's load reads the same.
    assert_eq!(
        read(
            &texts[1..],
            &[event(EventKind::WeightsLoaded, 1)],
            &[],
            EngineName::Transformers
        ),
        None
    );
}

#[test]
fn a_user_statement_that_runs_a_model_shows_inference() {
    let frames = [
        frame(
            2,
            "<module>",
            "/home/u/app/track_video.py",
            Some("results = model.track(frame, persist=True)"),
        ),
        frame(
            4,
            "track",
            "/v/site-packages/ultralytics/engine/model.py",
            None,
        ),
    ];
    let why = read(
        &["", "", "", "", OOM],
        &[],
        &frames,
        EngineName::Ultralytics,
    )
    .expect("a tracking call");
    assert!(
        why.contains("runs `results = model.track(frame, persist=True)`"),
        "{why}"
    );
    let frames = [frame(
        2,
        "answer",
        "/srv/bot.py",
        Some("emb = embedder.encode(texts, batch_size=64)"),
    )];
    assert!(read(&["", "", OOM], &[], &frames, EngineName::Pytorch).is_some());
    // A tokenizer's or a VAE's encode runs no model on inputs here (or a training's).
    for code in [
        "ids = tokenizer.encode(text)",
        "latents = vae.encode(x)",
        "z = model.encode(x); loss.backward()",
    ] {
        let frames = [frame(2, "run", "/srv/app.py", Some(code))];
        assert_eq!(
            read(&["", "", OOM], &[], &frames, EngineName::Pytorch),
            None,
            "{code}"
        );
    }
}

#[test]
fn an_entry_script_named_for_converting_weights_shows_format_conversion() {
    for name in [
        "convert_to_engine.py",
        "convert_llama_weights_to_hf.py",
        "export_onnx.py",
        "merge_lora.py",
        "scripts/fuse_qkv.py",
        "model_quantize.py",
    ] {
        assert!(conversion_script(name), "{name}");
    }
    for name in [
        "train.py",
        "convert_and_train.py",
        "test_convert.py",
        "converter_test.py",
        "convert.sh",
        "data_export_helper.py",
        "export_embeddings.py",
        "merge_events.py",
        "convert_coco_to_yolo.py",
    ] {
        assert!(!conversion_script(name), "{name}");
    }
    let owned = lines(&["[convert] layer 5/8 fused", "Traceback", "", OOM]);
    let refs: Vec<&ContextLine> = owned.iter().collect();
    let frames = [frame(
        3,
        "<module>",
        "/tmp/work/convert_to_engine.py",
        Some("out[k] = torch.cat([gate, up], dim=0).to(dtype)"),
    )];
    let inputs = InferenceInputs {
        failure_line: 4,
        lines: &refs,
        events: &[],
        frames: &frames,
        engine: EngineName::Pytorch,
        host_memory: false,
    };
    let mut report = PhaseReport::default();
    fill_unknown(&mut report, &inputs);
    assert_eq!(report.failed_in, Phase::FormatConversion);
    // Training shown around it: not a conversion.
    let frames = [frame(
        3,
        "<module>",
        "/tmp/work/convert_to_engine.py",
        Some("loss.backward()"),
    )];
    let inputs = InferenceInputs {
        frames: &frames,
        ..inputs
    };
    let mut report = PhaseReport::default();
    fill_unknown(&mut report, &inputs);
    assert_ne!(report.failed_in, Phase::FormatConversion);
}
