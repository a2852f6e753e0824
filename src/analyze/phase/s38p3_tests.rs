//! Session 38 (fix p3): an app's own line that it loads a model from a weights file or folder
//! (`parse/engine_log/phases_other.rs` `weights_from_path`), and its conversion
//! (`checkpoint_converting`).

use crate::analyze::explain::explain_text;
use crate::model::explain::{EventKind, Phase};

fn phase(text: &str) -> Phase {
    explain_text(text).phase.failed_in
}

#[test]
fn a_model_loaded_from_a_weights_path_when_the_process_dies_is_the_load() {
    for line in [
        "Loading model from models/ldm/stable-diffusion-v1/sd-v1-4.ckpt",
        ">> Loading inpainting-1.5 from /home/u/models/sd-v1-5-inpainting.ckpt",
        "Load BLIP2-LLM Checkpoint: pretrained/ckpt/pretrained_minigpt4.pth",
        "Initializing language decoder from ../pretrained_ckpt/vicuna_ckpt/7b_v0/ ...",
        "2024/01/02 10:11:12 - mmengine - INFO - Load checkpoint from work_dirs/epoch_12.pth",
    ] {
        let text =
            format!("{line}\n./run.sh: line 3:  8612 Killed                  python app.py\n");
        assert_eq!(phase(&text), Phase::WeightsLoad, "{line:?}");
    }
}

#[test]
fn data_configs_and_words_without_a_weights_path_open_no_load() {
    for line in [
        "Loading dataset from /data/train/shards/",
        "Loading config from configs/stable-diffusion/v1-inference.yaml",
        "Loading images from ./inputs/photos/",
        "Loading model from the hub",
        "We were loading the model from /models/llama-7b/ when it crashed because of the docs",
        // A sub-step's lowercase trace, a counter, words after the path.
        "loading U-Net from /models/sdxl/unet.safetensors",
        "Loading 138/244 tensors from /models/vae.safetensors",
        "Load checkpoint from work_dirs/iter_80000.pth (dry run: random init)",
    ] {
        assert!(
            !crate::parse::engine_log::event_kinds(line).contains(&EventKind::WeightsLoadStart),
            "{line:?}"
        );
    }
}

#[test]
fn a_loaded_checkpoint_being_converted_is_format_conversion() {
    let text = ">> Loading sd15 from /models/sd15.safetensors\n\
                >> Converting legacy checkpoint sd15 into a diffusers model...\n\
                ./run.sh: line 3:  8612 Killed                  python app.py\n";
    assert_eq!(phase(text), Phase::FormatConversion);
    let not_a_checkpoint = ">> Loading sd15 from /models/sd15.safetensors\n\
                            >> Converting T5 text encoder model to the expected format...\n\
                            ./run.sh: line 3:  8612 Killed                  python app.py\n";
    assert_ne!(phase(not_a_checkpoint), Phase::FormatConversion);
}
