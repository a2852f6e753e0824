//! Whole-text checks of what session 21's blind batches showed missing: an OOM named in a title
//! in more ways, the host's pinned memory refused by TensorFlow's stream executor, quantizing
//! and API requests in the reporter's words, engines named by their own lines (ExLlamaV2's
//! quantizer, the web UI's footer and folders, a pod's host name, accelerate's launcher, PyTorch's
//! allocator source, torch's version), fine-tuning methods as training, a layer's constructor
//! as weights created on the GPU. Every text is synthetic.

use super::explain_text;
use crate::model::explain::Phase;
use crate::model::failure::{EngineName, OomKind};

const OOM: &str = "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 704.00 MiB. \
                   GPU 0 has a total capacity of 139.80 GiB of which 555.12 MiB is free.";

#[test]
fn a_title_names_the_oom_after_a_version_or_as_its_last_word() {
    for title in [
        "[Bug]: vllm 0.8.5.dev468+g98834fefa.precompiled OOM on Qwen3-32B with 1 lora module",
        "[Bug]: serve Llama-3.2-11B-Vision-Instruct with 2 A10 oom",
    ] {
        let text = format!("{title}\n\nINFO Loading model weights took 10.07 GB on cuda:0\n");
        let report = explain_text(&text);
        assert!(report.is_gpu_oom, "{title}");
        assert_eq!(report.ooms[0].kind, OomKind::NamedWithoutMessage, "{title}");
    }
    // A program's pool is still no title's OOM (`alloc_req_slots runs out of memory`), nor an
    // `oom` inside a word or before more words.
    for text in [
        "req_to_token_pool.alloc runs out of memory\nINFO on cuda:0\n",
        "set the oom score of the process\nINFO on cuda:0\n",
    ] {
        assert!(!explain_text(text).is_gpu_oom, "{text}");
    }
}

#[test]
fn ggmls_status_with_its_place_elided_is_an_oom() {
    let report = explain_text(
        "CUDA error 2 [...] out of memory when using mixtral:8x7b but not on bigger models\n",
    );
    assert!(report.is_gpu_oom);
    assert_eq!(report.ooms[0].kind, OomKind::CudaErrorOutOfMemory);
    // Another status is not.
    assert!(!explain_text("CUDA error 700 [...] an illegal memory access\n").is_gpu_oom);
}

#[test]
fn a_titles_oom_is_the_gpus_when_the_stack_below_shows_cuda_or_gpu_memory() {
    for below in [
        "我部署的模型经常挂掉，显存报错如下：",
        "    paddle::memory::allocation::CUDAAllocator::AllocateImpl(unsigned long)",
    ] {
        let text = format!("hub Out of memory in a simple programm!!\n\n{below}\n");
        assert!(explain_text(&text).is_gpu_oom, "{below}");
    }
}

#[test]
fn a_pinned_host_allocation_of_the_stream_executor_is_host_memory() {
    let text = "2022-06-28 17:20:05.773805: E external/org_tensorflow/tensorflow/stream_executor/\
                cuda/cuda_driver.cc:802] failed to alloc 1073741824 bytes on host: \
                CUDA_ERROR_OUT_OF_MEMORY: out of memory\n\
                2022-06-28 17:20:05.775033: W external/org_tensorflow/tensorflow/core/\
                common_runtime/device/device_host_allocator.h:46] could not allocate pinned host \
                memory of size: 1073741824\n";
    let report = explain_text(text);
    assert!(!report.is_gpu_oom);
    let message = &report.ooms[0];
    assert_eq!(message.kind, OomKind::HostMemory);
    assert_eq!(
        message.details.host_required_bytes.map(|bytes| bytes.0),
        Some(1_073_741_824)
    );
    // From the device it stays the GPU's.
    let device = explain_text(
        "E cuda_driver.cc:802] failed to allocate 17.79G (19104890880 bytes) from device: \
         CUDA_ERROR_OUT_OF_MEMORY: out of memory\n",
    );
    assert!(device.is_gpu_oom);
}

#[test]
fn quantizing_converting_and_api_requests_in_the_reporters_words() {
    for (title, phase) in [
        (
            "CUDA OOM when quantizing Llama-3-8B-Instruct",
            Phase::FormatConversion,
        ),
        ("OOM on VRAM during quantization", Phase::FormatConversion),
        (
            "OOM while trying to convert a 70B model to 4.75 bits on a 4090",
            Phase::FormatConversion,
        ),
        (
            "I get an out of memory error when attempting to run from the API",
            Phase::Inference,
        ),
    ] {
        let report = explain_text(&format!("{title}\n\n{OOM}\n"));
        assert_eq!(report.phase.failed_in, phase, "{title}: {:?}", report.phase);
    }
    // A quantized model being trained is no quantization.
    let report = explain_text(&format!(
        "OOM while training a quantized model with QLoRA\n\n{OOM}\n"
    ));
    assert_eq!(report.phase.failed_in, Phase::TrainingStep);
}

#[test]
fn engines_named_by_their_own_lines() {
    for (line, engine) in [
        (
            " -- 0.05:3b/0.95:2b 32g s4         2.17 bpw    rfn_error: 0.07471",
            EngineName::Exllamav2,
        ),
        (
            " -- Target bits per weight: 4.25 (decoder), 6 (head)",
            EngineName::Exllamav2,
        ),
        (
            "version: [neo] •  python: 3.13.13  •  torch: 2.11.0+cu130 • gradio: 4.40.0  •  \
             checkpoint: 865ba09f5b",
            EngineName::Automatic1111,
        ),
        (
            "Loading Model: {'checkpoint_info': {'filename': 'D:\\\\Forge\\\\webui\\\\models\\\\x.safetensors'}}",
            EngineName::Automatic1111,
        ),
        (
            "  File \"/home/me/stable-diffusion-webui-forge/extensions/x/scripts/y.py\", line 3",
            EngineName::Automatic1111,
        ),
        (
            "lmdeploy-7666548865-hbpt4:1:1 [0] NCCL INFO Bootstrap : Using eth0:10.244.0.233<0>",
            EngineName::Lmdeploy,
        ),
        (
            "accelerate launch --num_cpu_threads_per_process=2 \"train_db.py\" --resolution=512",
            EngineName::Accelerate,
        ),
        (
            "r INTERNAL ASSERT FAILED at \"/opt/pytorch/c10/cuda/CUDACachingAllocator.cpp\":1154",
            EngineName::Pytorch,
        ),
        ("torch==1.3.1", EngineName::Pytorch),
    ] {
        let text = format!("{line}\nOOM when training the model on the GPU\n");
        assert_eq!(explain_text(&text).engine.name, engine, "{line}");
    }
    // A model kept in the web UI's folder, read by another program, does not name the web UI.
    let text = "load StableDiffusion checkpoint: /sd/stable-diffusion-webui/models/x.safetensors\n\
                OOM when training the model on the GPU\n";
    assert_ne!(explain_text(text).engine.name, EngineName::Automatic1111);
    // Nor does the launcher named in a sentence.
    let text = "I used accelerate launch for it\nOOM when training the model on the GPU\n";
    assert_ne!(explain_text(text).engine.name, EngineName::Accelerate);
}

#[test]
fn a_fine_tuning_methods_bar_and_peft_trainable_parameters_show_training() {
    let text = format!(
        "trainable params: 1,048,576 || all params: 543,197,184 || trainable%: 0.1930\n\
         grpo:   0%|          | 0/200 [00:01<?, ?it/s]\n\
         Traceback (most recent call last):\n  \
         File \"/tmp/grpo_lora_step.py\", line 20, in <module>\n    \
         logits = model(input_ids=ids, logits_to_keep=513)\n{OOM}\n"
    );
    assert_eq!(explain_text(&text).phase.failed_in, Phase::TrainingStep);
}

#[test]
fn a_layers_constructor_creates_weights_unless_a_stage_around_it_says_otherwise() {
    let linear = "  File \"/venv/lib/python3.12/site-packages/torch/nn/modules/linear.py\", line \
                  109, in __init__\n    torch.empty((out_features, in_features), \
                  **factory_kwargs)\n";
    let text = format!(
        "Traceback (most recent call last):\n  File \"/tmp/sweep.py\", line 25, in <module>\n    \
         model = make_mlp(width)\n{linear}{OOM}\n"
    );
    assert_eq!(explain_text(&text).phase.failed_in, Phase::WeightsLoad);
    let resize = format!(
        "Traceback (most recent call last):\n  File \"/tmp/add_tokens.py\", line 26, in <module>\n    \
         model.resize_token_embeddings(len(tokenizer))\n  File \"/venv/lib/python3.12/\
         site-packages/transformers/modeling_utils.py\", line 2690, in _resize_token_embeddings\n    \
         new_embeddings = self._get_resized_embeddings(\n{linear}{OOM}\n"
    );
    assert_eq!(
        explain_text(&resize).phase.failed_in,
        Phase::FormatConversion
    );
}

#[test]
fn thcs_generator_set_up_is_startup_and_trtllms_cache_refusal_its_allocation() {
    let thc = "RuntimeError: cuda runtime error (2) : out of memory at \
               /pytorch/aten/src/THC/THCTensorRandom.cu:25\n";
    assert_eq!(explain_text(thc).phase.failed_in, Phase::Startup);
    // THC's storage allocation is no generator's set-up.
    let storage = "RuntimeError: cuda runtime error (2) : out of memory at \
                   /pytorch/aten/src/THC/generic/THCStorage.cu:58\n";
    assert_ne!(explain_text(storage).phase.failed_in, Phase::Startup);
    let trt = "[TensorRT-LLM][INFO] Allocate 956301312 bytes for k/v cache.\n\
               E0306 16:40:07.708802 117 backend_model.cc:691] ERROR: Failed to create instance: \
               maxTokensInPagedKvCache (29184) must be large enough to process at least 1 \
               sequence to completion (i.e. must be larger than beam_width (1) * tokensPerBlock \
               (128) * maxBlocksPerSeq (272))\n";
    assert_eq!(explain_text(trt).phase.failed_in, Phase::KvCacheAlloc);
}

#[test]
fn a_stage_named_with_its_kind_and_the_allocators_cap_set_at_start() {
    for (title, phase) in [
        (
            "CUDA OOM during compiled inference, despite plenty of memory",
            Phase::Inference,
        ),
        (
            "OOM during distributed training on 8 GPUs",
            Phase::TrainingStep,
        ),
    ] {
        let report = explain_text(&format!("{title}\n\n{OOM}\n"));
        assert_eq!(report.phase.failed_in, phase, "{title}");
    }
    let denied = explain_text(&format!(
        "no OOM during batched inference, only at load\n\n{OOM}\n"
    ));
    assert_ne!(denied.phase.failed_in, Phase::Inference);
    let cap =
        "Traceback (most recent call last):\n  File \"/tmp/serve.py\", line 15, in <module>\n    \
               torch.cuda.set_per_process_memory_fraction(fraction, 0)\n  File \"/venv/lib/\
               python3.12/site-packages/torch/cuda/memory.py\", line 191, in \
               set_per_process_memory_fraction\n    raise ValueError(f\"Invalid fraction value\")\n\
               ValueError: Invalid fraction value: 1.07. Allowed range: 0~1\n";
    assert_eq!(explain_text(cap).phase.failed_in, Phase::Startup);
}

#[test]
fn atens_cublas_check_and_the_dataloaders_bus_error_name_pytorch() {
    for text in [
        "RuntimeError: CUDA error: CUBLAS_STATUS_ALLOC_FAILED when calling `cublasCreate(handle)`\n",
        "ERROR: Unexpected bus error encountered in worker. This might be caused by insufficient \
         shared memory (shm).\n",
    ] {
        assert_eq!(explain_text(text).engine.name, EngineName::Pytorch, "{text}");
    }
}

#[test]
fn detectron2s_training_time_under_a_failure_ends_a_training() {
    let text = format!(
        "Traceback (most recent call last):\n  File \"/x/site-packages/detectron2/layers/\
         wrappers.py\", line 88, in forward\n    x = F.conv2d(x, self.weight)\n{OOM}\n\
         [08/14 07:32:25 d2.engine.hooks]: Total training time: 0:00:01 (0:00:00 on hooks)\n"
    );
    assert_eq!(explain_text(&text).phase.failed_in, Phase::TrainingStep);
}

#[test]
fn the_training_announced_alone_before_a_failure() {
    for (line, phase) in [
        ("Training...", Some(Phase::TrainingStep)),
        ("Fine-tuning…", Some(Phase::TrainingStep)),
        ("Training data: 5000 samples", None),
    ] {
        let text = format!("INFO loading data\n{line}\n{OOM}\n");
        let found = explain_text(&text).phase.failed_in;
        match phase {
            Some(phase) => assert_eq!(found, phase, "{line}"),
            None => assert_eq!(found, Phase::Unknown, "{line}"),
        }
    }
}

#[test]
fn a_rich_frame_whose_path_fills_the_box_names_its_function_below() {
    let text = format!(
        "╭───────────── Traceback (most recent call last) ─────────────╮\n\
         │ /tmp/build.py:20 in <module>                                 │\n\
         │                                                              │\n\
         │ /opt/venv/lib/python3.12/site-packages/torch/nn/modules/sparse.py:403 │\n\
         │ in __init__                                                  │\n\
         │                                                              │\n\
         ╰──────────────────────────────────────────────────────────────╯\n{OOM}\n"
    );
    let report = explain_text(&text);
    assert_eq!(
        report.phase.failed_in,
        Phase::WeightsLoad,
        "{:?}",
        report.phase
    );
    // A line of the box that is not the function under a path names none.
    let text = format!(
        "╭───────────── Traceback (most recent call last) ─────────────╮\n\
         │ /opt/venv/lib/python3.12/site-packages/torch/nn/modules/sparse.py:403 │\n\
         │                                                              │\n\
         │ in __init__                                                  │\n\
         ╰──────────────────────────────────────────────────────────────╯\n{OOM}\n"
    );
    assert_eq!(explain_text(&text).phase.failed_in, Phase::Unknown);
}
