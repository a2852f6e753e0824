//! Whole-text checks of what session 30's blind batches showed missing. Every text is
//! synthetic.

use super::explain_text;
use crate::model::explain::Phase;
use crate::model::failure::EngineName;

use super::s26_tests::NEW_OOM;

const ALLOCATION: &str = "torch.cuda.OutOfMemoryError: Allocation on device 0 would exceed \
allowed memory. (out of memory)\nCurrently allocated     : 16.13 GiB\nRequested               : \
25.31 GiB\nDevice limit            : 24.00 GiB\nFree (according to CUDA): 0 bytes";

#[test]
fn a_workflow_node_named_at_the_failure_runs_the_workflow() {
    // ComfyUI's own words name a custom node: any node but a loader applies a model.
    let executing = format!("Error occurred when executing DynamiCrafterI2V:\n\n{ALLOCATION}\n");
    let report = explain_text(&executing).phase;
    assert_eq!(report.failed_in, Phase::Inference, "{report:?}");
    assert!(
        report.evidence[0].contains("`DynamiCrafterI2V`"),
        "{report:?}"
    );
    let loader = executing.replace("DynamiCrafterI2V", "DownloadAndLoadCogVideoModel");
    assert_eq!(explain_text(&loader).phase.failed_in, Phase::WeightsLoad);
    let save = executing.replace("DynamiCrafterI2V", "SaveAnimatedWEBP");
    assert_eq!(explain_text(&save).phase.failed_in, Phase::Unknown);
    let train = executing.replace("DynamiCrafterI2V", "TrainLoraNode");
    assert_eq!(explain_text(&train).phase.failed_in, Phase::Unknown);
    // The node's title alone above the message, as ComfyUI's error dialog is copied: read in a
    // ComfyUI report, for a name of several words.
    let dialog = format!(
        "got prompt\nmodel:tooncrafter_512.safetensors\n\nToonCrafterInterpolation\n{ALLOCATION}\n"
    );
    assert_eq!(explain_text(&dialog).phase.failed_in, Phase::Inference);
    // A one-word heading above the paste is no node; nor a class name outside ComfyUI.
    let heading = format!("got prompt\n### Logs\n{ALLOCATION}\n");
    assert_eq!(explain_text(&heading).phase.failed_in, Phase::Unknown);
    let elsewhere = format!("I ran my script:\n\nTileInterpolation\n{NEW_OOM}\n");
    assert_eq!(explain_text(&elsewhere).phase.failed_in, Phase::Unknown);
}

#[test]
fn the_method_comfyui_dispatched_to_names_the_node() {
    let root = "/root/ComfyUI";
    let frames = |node_file: &str, method: &str, code: &str| {
        format!(
            "!!! Exception during processing !!! Allocation on device \nTraceback (most recent \
             call last):\n  File \"{root}/execution.py\", line 324, in execute\n    output_data, \
             output_ui, has_subgraph = get_output_data(obj, input_data_all)\n  File \
             \"{root}/execution.py\", line 199, in get_output_data\n    return_values = \
             _map_node_over_list(obj, input_data_all, obj.FUNCTION)\n  File \
             \"{root}/execution.py\", line 170, in _map_node_over_list\n    \
             process_inputs(input_dict, i)\n  File \"{root}/execution.py\", line 159, in \
             process_inputs\n    results.append(getattr(obj, func)(**inputs))\n  File \
             \"{root}/custom_nodes/{node_file}\", line 817, in {method}\n    {code}\n\
             {ALLOCATION}\n"
        )
    };
    let encode = frames(
        "ComfyUI-HunyuanVideoWrapper/nodes.py",
        "encode",
        "latents = vae.encode(image).latent_dist.sample(generator)",
    );
    let report = explain_text(&encode).phase;
    assert_eq!(report.failed_in, Phase::Inference, "{report:?}");
    assert!(report.evidence[0].contains("`encode`"), "{report:?}");
    let load = frames(
        "ComfyUI-HunyuanVideoWrapper/nodes.py",
        "loadmodel",
        "transformer = HYVideoDiffusionTransformer(**config)",
    );
    assert_eq!(explain_text(&load).phase.failed_in, Phase::WeightsLoad);
    // Only ComfyUI's dispatch frames: the node is not shown.
    let cut = encode
        .lines()
        .filter(|line| !line.contains("custom_nodes") && !line.contains("latent_dist"))
        .collect::<Vec<_>>()
        .join("\n");
    assert_eq!(explain_text(&cut).phase.failed_in, Phase::Unknown);
}

#[test]
fn an_llm_rollout_of_an_rl_trainer_is_inference() {
    let verl = "/usr/local/lib/python3.10/dist-packages/verl";
    let text = format!(
        "Traceback (most recent call last):\n  File \"{verl}/single_controller/ray/base.py\", \
         line 645, in func\n    return getattr(self.worker_dict[key], name)(*args, **kwargs)\n  \
         File \"{verl}/workers/fsdp_workers.py\", line 730, in generate_sequences\n    output = \
         self.rollout.generate_sequences(prompts=prompts)\n{NEW_OOM}\n"
    );
    let report = explain_text(&text).phase;
    assert_eq!(report.failed_in, Phase::Inference, "{report:?}");
}

#[test]
fn programs_and_flags_name_their_engine() {
    let engine = |text: &str| explain_text(text).engine.name;
    let cli = "./llama.cpp/llama-cli -hf unsloth/DeepSeek-R1-0528-GGUF:IQ1_S --n-gpu-layers 99\n\
               /llama.cpp/ggml/src/ggml-cuda/ggml-cuda.cu:75: CUDA error\n\
               CUDA error: out of memory\n  current device: 7, in function \
               ggml_backend_cuda_synchronize at ggml-cuda.cu:2461\n";
    assert_eq!(engine(cli), EngineName::Llamacpp);
    let earlyoom = "Aug 04 10:39:10 debian earlyoom[845]: low memory! at or below SIGTERM \
                    limits: mem  3.00%, swap 10.00%\nAug 04 10:39:10 debian earlyoom[845]: \
                    sending SIGTERM to process 322603 uid 1000 \"python3.13\": oom_score 1282, \
                    VmRSS 29931 MiB, cmdline \"/home/u/envs/env/bin/python3.13 main.py --listen \
                    0.0.0.0 --reserve-vram=0.05\"\nAug 04 10:39:12 debian earlyoom[845]: process \
                    322603 exited after 2.805 seconds\n";
    assert_eq!(engine(earlyoom), EngineName::Comfyui);
    let trainer = format!(
        "python run_language_modeling.py --output_dir out --do_train \
         --per_device_train_batch_size 1 --fp16\n{NEW_OOM}\n"
    );
    assert_eq!(engine(&trainer), EngineName::Transformers);
    // A longer name holding a binary's is not it.
    let image = format!("docker run ghcr.io/example/llama-cli-extra:latest\n{NEW_OOM}\n");
    assert_ne!(engine(&image), EngineName::Llamacpp);
}

#[test]
fn a_loader_naming_the_model_it_reads_from_is_a_load() {
    let text = format!(
        "2023-08-24 12:53:07,688 - modelscope - INFO - initiate model from /root/.cache/hub/m\n\
         2023-08-24 12:53:07,692 - modelscope - INFO - initialize model from /root/.cache/hub/m\n\
         2023-08-24 12:53:35,306 - modelscope - INFO - Build encoder with FrozenOpenCLIPEmbedder\n\
         {NEW_OOM}\n"
    );
    assert_eq!(explain_text(&text).phase.failed_in, Phase::WeightsLoad);
    // The words without a source named are no load.
    let bare = text.replace(
        "model from /root/.cache/hub/m",
        "weights init scheme xavier",
    );
    assert_eq!(explain_text(&bare).phase.failed_in, Phase::Unknown);
}

#[test]
fn a_compilers_warning_between_a_bar_and_the_failure_is_passed_over() {
    let xla = "2024-08-15 00:19:52.347184: E external/xla/xla/pjrt/pjrt_stream_executor_client.cc:\
               2593] Execution of replica 0 failed: RESOURCE_EXHAUSTED: Failed to allocate request \
               for 108.03GiB (116000729080B) on device ordinal 0";
    let text = format!(
        "Training ttt_transformer_125m:   0%|          | 1/4800 [00:00<?, ?it/s]\n\
         warning: Linking two modules of different target triples: 'LLVMDialectModule' is \
         'nvptx64-nvidia-gpulibs' whereas '' is 'nvptx64-nvidia-cuda'\n\n{xla}\n"
    );
    assert_eq!(explain_text(&text).phase.failed_in, Phase::TrainingStep);
}

#[test]
fn a_count_of_steps_in_chinese_is_a_trainings_progress() {
    let text = format!("# lora训练为啥会OOM，每次50步的时候oom\n\n{NEW_OOM}\n");
    assert_eq!(explain_text(&text).phase.failed_in, Phase::TrainingStep);
    // An instruction's step is no progress.
    let step = format!("# 按照第1步安装后运行demo就OOM\n\n{NEW_OOM}\n");
    assert_ne!(explain_text(&step).phase.failed_in, Phase::TrainingStep);
}
