//! CLI tests of the applications `explain` names for their own memory settings: the engine in
//! the JSON document and the next steps in that application's flags (docs/engines.md).

use super::{fixture, oomdoc};

/// `explain --json` on a corpus text: the engine name and the next steps.
#[expect(
    clippy::unwrap_used,
    reason = "test helper: a failure here is a test failure"
)]
fn engine_and_steps(corpus_text: &str) -> (String, Vec<String>) {
    let output = oomdoc()
        .args(["explain", "--json"])
        .arg(fixture(&format!("corpus/{corpus_text}")))
        .output()
        .unwrap();
    let document: serde_json::Value = serde_json::from_slice(&output.stdout)
        .unwrap_or_else(|error| panic!("stdout is not one JSON document: {error}"));
    let name = document["engine"]["name"].as_str().unwrap().to_string();
    let steps = document["verdict"]["next_steps"]
        .as_array()
        .unwrap()
        .iter()
        .map(|step| step.as_str().unwrap().to_string())
        .collect();
    (name, steps)
}

#[test]
fn detectron2_training_gets_its_solver_and_input_settings() {
    let (name, steps) = engine_and_steps(
        "training/pytorch-detectron2-train-loop-run-step-backward-bold-markdown.txt",
    );
    assert_eq!(name, "detectron2");
    let all = steps.join("\n");
    assert!(all.contains("SOLVER.IMS_PER_BATCH"), "{all}");
    assert!(all.contains("INPUT.MIN_SIZE_TRAIN"), "{all}");
    // Not the transformers Trainer's words.
    assert!(!all.contains("per_device_train_batch_size"), "{all}");
}

#[test]
fn faster_whisper_gets_ctranslate2_settings_and_no_pytorch_allocator_advice() {
    let (name, steps) =
        engine_and_steps("other/ctranslate2-faster-whisper-generate-cuda-failed.txt");
    assert_eq!(name, "ctranslate2");
    let all = steps.join("\n");
    assert!(all.contains("int8_float16"), "{all}");
    assert!(all.contains("beam_size"), "{all}");
    for torch_only in [
        "PYTORCH_CUDA_ALLOC_CONF",
        "expandable_segments",
        "memory_summary",
    ] {
        assert!(!all.contains(torch_only), "{torch_only} in: {all}");
    }
}

#[test]
fn fooocus_gets_its_launch_flags_not_comfyui_s() {
    let (name, steps) =
        engine_and_steps("other/fooocus-2.1-prepare-sampling-load-models-gpu-dispatch-cut.txt");
    assert_eq!(name, "fooocus");
    let all = steps.join("\n");
    assert!(all.contains("--always-low-vram"), "{all}");
    assert!(all.contains("--always-offload-from-vram"), "{all}");
    assert!(!all.contains("--lowvram"), "{all}");
}

#[test]
fn ultralytics_training_gets_batch_and_imgsz() {
    let (name, steps) =
        engine_and_steps("training/pytorch-s7b-ultralytics-8.0.57-a5000-italic-message-only.txt");
    assert_eq!(name, "ultralytics");
    let all = steps.join("\n");
    assert!(all.contains("batch="), "{all}");
    assert!(all.contains("imgsz="), "{all}");
}

#[test]
fn an_openmmlab_shared_memory_failure_names_its_dataloader_workers() {
    let (name, steps) = engine_and_steps("other/shm-mmseg-train-dataloader-bus-error.txt");
    assert_eq!(name, "openmmlab");
    let all = steps.join("\n");
    assert!(all.contains("--shm-size"), "{all}");
    assert!(all.contains("train_dataloader.num_workers"), "{all}");
    // GPU advice has no place under a shared-memory failure.
    assert!(!all.contains("train_dataloader.batch_size"), "{all}");
}
