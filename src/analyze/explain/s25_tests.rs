//! Whole-text checks of what session 25's blind batches showed missing. Every text is
//! synthetic.

use super::explain_text;
use crate::model::explain::Phase;
use crate::model::failure::EngineName;
use crate::model::Bytes;

const OLD_OOM: &str =
    "RuntimeError: CUDA out of memory. Tried to allocate 2.00 MiB (GPU 0; 10.76 GiB total \
     capacity; 9.59 GiB already allocated; 4.25 MiB free; 9.78 GiB reserved in total by PyTorch)";

fn phase(text: &str) -> Phase {
    explain_text(text).phase.failed_in
}

#[test]
fn an_issue_title_naming_the_training_is_the_stage() {
    for title in [
        "# Training OOM",
        "## Training Hindi TTS",
        "# Fine-tuning Llama-3 8B out of memory",
    ] {
        assert_eq!(
            phase(&format!("{title}\n\n{OLD_OOM}\n")),
            Phase::TrainingStep,
            "{title}"
        );
    }
    // Its set-up makes it the job; another stage or the training's surroundings, not the step.
    for title in [
        "# Training on 8xA100 with DeepSpeed",
        "# Training data loading OOM",
        "# Training script crashes",
        "Training Hindi TTS",
    ] {
        assert_eq!(
            phase(&format!("{title}\n\n{OLD_OOM}\n")),
            Phase::Unknown,
            "{title}"
        );
    }
}

#[test]
fn coquis_training_step_line_is_a_step_and_its_eval_step_is_not() {
    let text = format!(
        "\n > TRAINING (2020-08-19 05:42:26)\n\n   --> STEP: 10/13 -- GLOBAL_STEP: 25\n     | > \
         decoder_loss: 11.49612  (11.66776)\n{OLD_OOM}\n"
    );
    assert_eq!(phase(&text), Phase::TrainingStep);
    let text = format!("\n > EVALUATION\n\n   --> STEP: 3\n{OLD_OOM}\n");
    assert_ne!(phase(&text), Phase::TrainingStep);
}

#[test]
fn colabs_linked_frames_and_unslothss_saves_are_a_conversion() {
    let text = format!(
        "OutOfMemoryError                          Traceback (most recent call last)\n\
         [<ipython-input-9-ccd214168cfa>](https://localhost:8080/#) in <cell line: 0>()\n\
         ----> 3     model.push_to_hub_gguf(\n\n3 frames\n\
         [/usr/local/lib/python3.11/dist-packages/unsloth/save.py](https://localhost:8080/#) in \
         _merge_lora(layer, name)\n    176             # W\n\
         --> 177             maximum_element = torch.max(W.min().abs(), W.max())\n\n{OLD_OOM}\n"
    );
    assert_eq!(phase(&text), Phase::FormatConversion);
    // The method the user called is enough.
    let text = format!(
        "Traceback (most recent call last):\n  File \"/content/run.py\", line 9, in <module>\n    \
         model.save_pretrained_merged(\"out\", tokenizer)\n  File \"/content/x.py\", line 3, in \
         save_pretrained_merged\n    f()\n{OLD_OOM}\n"
    );
    assert_eq!(phase(&text), Phase::FormatConversion);
}

#[test]
fn torch7s_lua_frames_are_read_and_name_no_pytorch() {
    let text =
        "THCudaCheck FAIL file=/tmp/luarocks_cutorch/THCStorage.cu line=65 error=2 : out of \
                memory\n/usr/local/bin/luajit: /usr/local/share/lua/5.1/torch/File.lua:351: cuda \
                runtime error (2) : out of memory at THCStorage.cu:65\nstack traceback:\n        \
                [C]: in function 'read'\n        /usr/local/share/lua/5.1/torch/File.lua:351: in \
                function </usr/local/share/lua/5.1/torch/File.lua:245>\n        /usr/local/share/\
                lua/5.1/torch/File.lua:351: in function 'readObject'\n        /usr/local/share/lua/\
                5.1/nn/Module.lua:184: in function 'read'\n";
    let report = explain_text(text);
    assert_eq!(report.phase.failed_in, Phase::WeightsLoad);
    assert_eq!(report.engine.name, EngineName::Other);
}

#[test]
fn ascends_and_mindsporess_device_memory_failures_are_gpu_ooms() {
    let text = "[ERROR] PRE_ACT(54175,fffdbcff91e0,python):2024-10-22-11:24:55.301.443 \
                [mindspore/ccsrc/backend/common/mem_reuse/mem_dynamic_allocator.cc:392] \
                AddMemBlockAndMemBufByEagerFree] TotalUsedMemStatistics : 29356337664 plus \
                TotalUsedByEventMemStatistics : 0 and plus alloc size : 301990400 is more than \
                total mem size : 29464985600.\n";
    let report = explain_text(text);
    assert!(report.is_gpu_oom);
    let figures = report.oom.expect("figures");
    assert_eq!(figures.tried_to_allocate_bytes, Some(Bytes(301_990_400)));
    assert_eq!(figures.total_capacity_bytes, Some(Bytes(29_464_985_600)));
    let text = "[ERROR] aclrtSetDevice(deviceId) failed: 507033\n[ERROR] RecentErrMsg: [PID: \
                1613532] 2026-03-24-12:14:45.885.234 Memory_Allocation_Failure(EL0004): Failed \
                to allocate memory.\n        Possible Cause: Available memory is insufficient.\n";
    assert!(explain_text(text).is_gpu_oom);
    let text =
        "Device(id:0) memory isn't enough and alloc failed, kernel name: Default/MatMul-op1, \
                alloc size: 301990400B.\n";
    let report = explain_text(text);
    assert!(report.is_gpu_oom);
    let figures = report.oom.expect("figures");
    assert_eq!(figures.tried_to_allocate_bytes, Some(Bytes(301_990_400)));
}

#[test]
fn a_bfc_request_printed_in_bytes_is_the_request() {
    let text = "2023-05-01 E itex/core/devices/bfc_allocator.cc:101] Allocator ran out of memory \
                trying to allocate 10529419660 Bytes (rounded to 10529419776 Bytes)\n";
    let figures = explain_text(text).oom.expect("figures");
    assert_eq!(figures.tried_to_allocate_bytes, Some(Bytes(10_529_419_660)));
    // TensorFlow's own: the rounded figure is exact where the request is rounded for display.
    let text = "W tensorflow/core/common_runtime/bfc_allocator.cc:271] Allocator (GPU_0_bfc) ran \
                out of memory trying to allocate 1.20GiB (rounded to 1289748480).\n";
    let figures = explain_text(text).oom.expect("figures");
    assert_eq!(figures.tried_to_allocate_bytes, Some(Bytes(1_289_748_480)));
}

#[test]
fn an_export_to_tensorrt_is_a_conversion_past_tensorrts_log_lines() {
    let text = "TensorRT: starting export with TensorRT 8.2.4.2...\nTensorRT: building FP32 \
                engine in yolov5s.engine\nexport.py:263: DeprecationWarning: Use \
                build_serialized_network instead.\n[04/25/2022-11:25:21] [TRT] [I] \
                [MemUsageChange] Init cuDNN: CPU +0, GPU +34, now: CPU 0, GPU 820 (MiB)\n\
                [04/25/2022-11:25:29] [TRT] [W] GPU error during getBestTactic: Conv_3 : out of \
                memory\n[04/25/2022-11:25:30] [TRT] [E] 1: [resizingAllocator.cpp::allocate] \
                Error Code 1: Cuda Runtime (out of memory)\n";
    assert_eq!(phase(text), Phase::FormatConversion);
    let text = format!("Unsloth: Merging 4bit and LoRA weights to 16bit...\n{OLD_OOM}\n");
    assert_eq!(phase(&text), Phase::FormatConversion);
    // Words of the reporter's.
    let text = format!("# OOM when exporting yolov8n to TensorRT\n\n{OLD_OOM}\n");
    assert_eq!(phase(&text), Phase::FormatConversion);
}

#[test]
fn the_model_as_the_subject_of_its_load_is_the_load() {
    for words in [
        "The pod is killed by Kubernetes while model is loading.",
        "It runs out of memory while the model was loading.",
    ] {
        assert_eq!(
            phase(&format!("{words}\n\n{OLD_OOM}\n")),
            Phase::WeightsLoad
        );
    }
}

#[test]
fn xlas_status_raised_by_pytorch_xla_or_iree_is_not_jax() {
    let engine = |text: &str| explain_text(text).engine.name;
    assert_eq!(
        engine(
            "RuntimeError: Bad StatusOr access: RESOURCE_EXHAUSTED: Error allocating device \
             buffer: Attempting to allocate 196.00M. That was not possible. There are 134.44M \
             free.; (1x0x0_HBM0)\n"
        ),
        EngineName::Pytorch
    );
    assert_eq!(
        engine(
            "RESOURCE_EXHAUSTED; HIP driver error 'hipErrorOutOfMemory' (2): out of memory; \
             while invoking native function hal.device.queue.alloca; while calling import;\n"
        ),
        EngineName::Other
    );
    // JAX before 0.4 raised the same status as a RuntimeError.
    assert_eq!(
        engine(
            "UnfilteredStackTrace: RuntimeError: RESOURCE_EXHAUSTED: Attempting to allocate \
             31.06M. That was not possible. There are 58.64M free.\n"
        ),
        EngineName::Jax
    );
}

#[test]
fn vllm_omnis_dummy_run_at_start_is_its_warm_up() {
    let text = "Traceback (most recent call last):\n  File \"/root/vllm-omni/vllm_omni/diffusion/\
                diffusion_engine.py\", line 84, in __init__\n    self._dummy_run()\n  File \
                \"/root/vllm-omni/vllm_omni/diffusion/diffusion_engine.py\", line 382, in \
                _dummy_run\n    raise RuntimeError(f\"Dummy run failed: {output.error}\")\n\
                torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 20.00 MiB. GPU 0 \
                has a total capacity of 79.19 GiB of which 1.00 MiB is free.\n";
    assert_eq!(phase(text), Phase::Profiling);
}

#[test]
fn lightnings_model_summary_forward_is_a_sizing_pass_and_an_ema_update_a_step() {
    let text = format!(
        "Traceback (most recent call last):\n  File \"/x/site-packages/lightning/pytorch/trainer/\
         trainer.py\", line 584, in fit\n    call._call_and_handle_interrupt(\n  File \"/x/\
         site-packages/lightning/pytorch/utilities/model_summary/model_summary.py\", line 371, \
         in _forward_example_input\n    model(input_)\n{OLD_OOM}\n"
    );
    assert_eq!(phase(&text), Phase::Profiling);
    let text = format!(
        "Traceback (most recent call last):\n  File \"/tmp/pretrain.py\", line 60, in <module>\n\
         \x20   ema.update(model)\n  File \"/tmp/pretrain.py\", line 37, in update\n    shadow = \
         [p.float() for p in params]\n{OLD_OOM}\n"
    );
    assert_eq!(phase(&text), Phase::TrainingStep);
}

#[test]
fn arrows_memory_error_and_a_message_cut_after_its_reserved_figure() {
    let report = explain_text("pyarrow.lib.ArrowMemoryError: malloc of size 16777216 failed\n");
    assert!(!report.is_gpu_oom);
    let details = report.ooms.first().map(|oom| oom.details.clone());
    assert_eq!(
        details.and_then(|details| details.host_required_bytes),
        Some(Bytes(16_777_216))
    );
    let text = "RuntimeError: CUDA out of memory. Tried to allocate 93.75 GiB (GPU 4; 79.17 GiB \
                total capacity; 1.52 GiB already allocated; 74.14 GiB free; 1.54 GiB reserved in \
                total\n";
    let figures = explain_text(text).oom.expect("figures");
    assert_eq!(
        figures
            .reserved_total_bytes
            .map(|bytes| bytes.0 / (1 << 20)),
        Some(1576)
    );
}
