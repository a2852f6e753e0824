//! Whole-text checks of what session 33's blind batches showed missing. Every text is
//! synthetic.

use super::explain_text;
use super::whole_text::{engine, phase};
use crate::model::explain::Phase;
use crate::model::failure::EngineName;

const TORCH_OOM: &str = "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 64.00 MiB. \
    GPU 0 has a total capacity of 24.00 GiB of which 0 bytes is free. Of the allocated memory \
    22.89 GiB is allocated by PyTorch, and 355.13 MiB is reserved by PyTorch but unallocated.\n";

#[test]
fn a_models_own_code_from_the_hub_is_run_by_transformers() {
    // A frame cut inside its path, as a paste that starts mid-line keeps it.
    let text = "s/transformers_modules/Agent-7B/modeling.py\", line 1208, in forward\n    \
                output = self._norm(x.float()).type_as(x)\n\
                RuntimeError: CUDA error: out of memory\n";
    assert_eq!(engine(text), EngineName::Transformers);
    let text = "Traceback (most recent call last):\n  \
                File \"/root/.cache/huggingface/modules/transformers_modules/main/modeling_x.py\", \
                line 85, in _get_unpad_data\n    \
                indices = torch.nonzero(mask.flatten(), as_tuple=False).flatten()\n\
                RuntimeError: CUDA error: out of memory\n";
    assert_eq!(engine(text), EngineName::Transformers);
    // A relative path with a space is a sentence, not a frame.
    let text = "my notes/x.py\", line 3, in f\nRuntimeError: CUDA error: out of memory\n";
    assert_eq!(engine(text), EngineName::Pytorch);
}

#[test]
fn module_to_spread_over_lines_moves_the_weights() {
    let text = format!("I tried on 2 RTX3090 and had this error:\n`   return t.to(\n{TORCH_OOM}");
    assert_eq!(phase(&text), Phase::WeightsLoad);
}

#[test]
fn building_a_transformers_pipeline_loads_its_model_and_calling_it_runs_it() {
    let text = format!(
        "```\ngenerator = pipeline('text-generation', model='gpt2',device=0)\n```\n\
         When i run these code, an unexpected error occured.\n{TORCH_OOM}"
    );
    assert_eq!(phase(&text), Phase::WeightsLoad);
    let text = format!("```\noutput = pipe(messages, max_new_tokens=20)\n```\n{TORCH_OOM}");
    assert_eq!(phase(&text), Phase::Inference);
}

#[test]
fn a_numbered_title_is_no_timestamp() {
    let text = format!("04-GLM-4-9B-Chat vLLM 部署调用显存溢出问题\n{TORCH_OOM}");
    assert_eq!(engine(&text), EngineName::Vllm);
}

#[test]
fn torchs_dll_failing_to_load_for_the_paging_file_is_at_start() {
    let text = "OSError: [WinError 1455] 页面文件太小，无法完成操作。 Error loading \
                \"D:\\app\\runtime\\lib\\site-packages\\torch\\lib\\cufft64_10.dll\" \
                or one of its dependencies.\n";
    assert_eq!(phase(text), Phase::Startup);
}

#[test]
fn a_comfyui_node_title_after_the_reporters_words_names_the_node() {
    let text = "显存不足This error means you ran out of memory on your GPU.\n\n\
                显存不足，Propainter_Sampler\n\
                Allocation on device\n\
                This error means you ran out of memory on your GPU.\n\n\
                TIPS: If the workflow worked before you might have accidentally set the \
                batch_size to a large number.\n";
    assert_eq!(phase(text), Phase::Inference);
}

#[test]
fn the_training_phase_named_with_its_noun() {
    let text = "during the phase of training, I have an error about memory cuda \
                \" CUDA out of memory. Tried to allocate 2.59 GiB\"\n";
    assert_eq!(phase(text), Phase::TrainingStep);
}

#[test]
fn a_kill_right_after_the_load_reached_its_total_is_the_loads() {
    let text = "Loading checkpoint shards: 100%|##########| 61/61 [05:45<00:00,  5.66s/it]\n \
                WARNING  Sending process 14 closing signal SIGTERM         api.py:699\n \
                ERROR    failed (exitcode: -9) local_rank: 5 (pid: 22) of  api.py:673\n";
    assert_eq!(phase(text), Phase::WeightsLoad);
    // A request served after the load: the kill is not the load's.
    let text = "Loading checkpoint shards: 100%|##########| 2/2 [00:05<00:00,  2.66s/it]\n\
                INFO:     127.0.0.1:5000 - \"POST /v1/chat/completions HTTP/1.1\" 200 OK\n\
                Killed\n";
    assert_ne!(phase(text), Phase::WeightsLoad);
}

#[test]
fn training_libraries_named_in_a_sentence() {
    let cases = [
        (
            "I train on 80 A100s using accelerate  FSDP.",
            EngineName::Accelerate,
        ),
        (
            "We fine-tune with DeepSpeed ZeRO-3 on 8 GPUs.",
            EngineName::Deepspeed,
        ),
        ("Fine-tuning Llama with PEFT LoRA.", EngineName::Peft),
        // The verb is no library.
        ("I want to accelerate my training.", EngineName::Pytorch),
    ];
    for (sentence, expected) in cases {
        let text = format!("{sentence}\n{TORCH_OOM}");
        assert_eq!(engine(&text), expected, "{sentence}");
    }
}

#[test]
fn fooocus_prints_its_total_time_after_each_task() {
    let text = format!("{TORCH_OOM}Total time: 11.47 seconds\n");
    assert_eq!(engine(&text), EngineName::Fooocus);
    let text = format!("{TORCH_OOM}Total time: 11 min\n");
    assert_eq!(engine(&text), EngineName::Pytorch);
}

#[test]
fn llama_cpps_converters_of_every_name() {
    let text = "Everything's OK until this step\n\npython3 convert-pth-to-ggml.py models/7B/ 1\n\
                n_parts =  1\nProcessing part  0\nKilled\n";
    let report = explain_text(text);
    assert_eq!(report.engine.name, EngineName::Llamacpp);
    assert_eq!(report.phase.failed_in, Phase::FormatConversion);
}

#[test]
fn conversions_and_state_pools_named_as_nouns() {
    let text = "# Model conversion from HF to GGUF crashes due to lack of memory\n\n\
                It quickly ran through the 32GB RAM and was Killed.\n";
    assert_eq!(phase(text), Phase::FormatConversion);
    let text = "The server reads all 8/8 checkpoint shards, then fails during Marlin WNA16\n\
                post-load processing:\n\nRuntimeError: CUDA error: out of memory\n";
    assert_eq!(phase(text), Phase::FormatConversion);
    let text = "Mamba pool 9-18 GiB allocation OOM on a 96 GB card\n\n\
                torch.OutOfMemoryError on Mamba state cache allocation\n";
    assert_eq!(phase(text), Phase::KvCacheAlloc);
}

#[test]
fn questions_put_to_a_chat_app() {
    let text = "python webui.py\n询问问题，大约3个问题后，内存溢出\n\
                torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 1.12 GiB\n";
    assert_eq!(phase(text), Phase::Inference);
}

#[test]
fn an_image_apps_kill_after_its_lazy_load_is_not_the_loads() {
    // ComfyUI loads the VAE after the sampler's steps: the kill is the generation's.
    let text = "Randomly crashes after generation\n\
                comfyui  | Attempting to release mmap (440)\n\
                100% 4/4 [04:31<00:00, 67.90s/it]\n\
                comfyui  | Requested to load WanVAE\n\
                comfyui  | loaded completely 2116.2459716796875 242.02829551696777 True\n\
                comfyui  | /runner-scripts/entrypoint.sh: line 52:     9 Killed      \
                python3 ./ComfyUI/main.py --listen --port 8188\n\
                comfyui exited with code 137\n";
    assert_ne!(phase(text), Phase::WeightsLoad);
    // An evaluation inside the training phase is the evaluation's.
    let text = "The OutOfMemoryError seems to be caused by the VAE during inference in the \
                training phase.\n";
    assert_eq!(phase(text), Phase::Inference);
}
