//! Whole-text checks of what session 35's blind batches showed missing: short excerpts of the
//! texts (names and sizes as printed), and the cases each rule must leave alone.

use super::explain_text;
use super::whole_text::{engine, phase, TORCH_OOM};
use crate::model::explain::Phase;
use crate::model::failure::EngineName;
use crate::model::Bytes;

#[test]
fn gaudis_device_memory_failure_prints_the_request_in_bytes() {
    let text = "gaudi-llm-ds-ft-worker-0: [rank7]: RuntimeError: [Rank:7] FATAL ERROR :: \
                MODULE:PT_DEVMEM Allocation failed for size::469762048 (448)MB\n";
    let report = explain_text(text);
    assert!(report.is_gpu_oom);
    let oom = report.oom.expect("figures");
    assert_eq!(oom.tried_to_allocate_bytes, Some(Bytes(469_762_048)));
    assert!(oom.lower_bound_fields.is_empty());
    // Another module's fatal error is no memory failure.
    let text = "RuntimeError: [Rank:0] FATAL ERROR :: MODULE:SYNHELPER workspace Graph compile \
                failed\n";
    assert!(!explain_text(text).is_gpu_oom);
}

#[test]
fn more_than_one_exabyte_is_a_lower_bound() {
    let text = "RuntimeError: CUDA out of memory. Tried to allocate more than 1EB memory.\n";
    let report = explain_text(text);
    let oom = report.oom.clone().expect("figures");
    assert_eq!(oom.tried_to_allocate_bytes, Some(Bytes(1 << 60)));
    assert_eq!(oom.lower_bound_fields, vec!["tried_to_allocate_bytes"]);
    let line = report
        .accounting
        .iter()
        .find(|line| line.key == "tried_to_allocate")
        .expect("the request's line");
    assert!(line.lower_bound);
    // A printed size is the size itself.
    let oom = explain_text(TORCH_OOM).oom.expect("figures");
    assert_eq!(oom.tried_to_allocate_bytes, Some(Bytes(64 << 20)));
    assert!(oom.lower_bound_fields.is_empty());
}

#[test]
fn llama_servers_slot_with_a_task_is_serving_it() {
    let text = "# Eval bug: llama-server crashed\n\
                `llama-server` should reject to serve rather than crash if `CUDA error: out of \
                memory`\n\
                ggml_cuda_init: found 1 CUDA devices (Total VRAM: 45490 MiB):\n\
                slot update_slots: id  2 | task 10391 | prompt processing done\n";
    assert_eq!(phase(text), Phase::Inference);
    // A slot without a task (`task -1`) is the server setting up its slots.
    let text = "# Eval bug: llama-server crashed\n\
                `llama-server` crashes with `CUDA error: out of memory`\n\
                ggml_cuda_init: found 1 CUDA devices (Total VRAM: 45490 MiB):\n\
                slot load_model: id  2 | task -1 | new slot\n";
    assert_ne!(phase(text), Phase::Inference);
}

#[test]
fn llama_clis_turn_timings_show_the_chat_being_served() {
    let text = "> Hey\n\nHello! How can I help you today?\n\n\
                [ Prompt: 81.3 t/s | Generation: 27.3 t/s ]\n\n> Whats up!\n\n\
                /home/user/llama.cpp/ggml/src/ggml-cuda/ggml-cuda.cu:103: CUDA error\n\
                ggml_cuda_compute_forward: MUL_MAT failed\n\
                CUDA error: out of memory\n";
    assert_eq!(phase(text), Phase::Inference);
    // Without an answered turn the same failure shows no stage.
    let text = "/home/user/llama.cpp/ggml/src/ggml-cuda/ggml-cuda.cu:103: CUDA error\n\
                ggml_cuda_compute_forward: MUL_MAT failed\n\
                CUDA error: out of memory\n";
    assert_eq!(phase(text), Phase::Unknown);
}

#[test]
fn a_chinese_sentence_quoting_the_error_is_the_reporters() {
    let text = "继续推理一段时间后，api server会报CUDA runtime error: out of memory \
                /opt/lmdeploy/src/turbomind/utils/allocator.h:231 错误，然后可观察到服务重启。\n";
    assert_eq!(phase(text), Phase::Inference);
    // A log line with the location first is the program's.
    let text = "allocator.h:231 继续推理一段时间后，CUDA runtime error: out of memory\n";
    assert_eq!(phase(text), Phase::Unknown);
}

#[test]
fn mmgps_pinned_ram_is_the_hosts() {
    let text = "# OOM\n\
                Pinning data of 'transformer' to reserved RAM\n\
                Unable to pin more tensors for this model as the maximum reservable memory has \
                been reached (12189.48).\n\
                Traceback (most recent call last):\n  \
                File \"D:\\opt\\envs\\wan2gp\\Lib\\site-packages\\mmgp\\offload.py\", line 773, \
                in _pin_to_memory\n";
    let report = explain_text(text);
    assert!(!report.is_gpu_oom);
    assert_eq!(report.phase.failed_in, Phase::WeightsLoad);
    // The GPU's own failure in the same app is still the GPU's.
    let text = format!("# OOM\n{TORCH_OOM}");
    assert!(explain_text(&text).is_gpu_oom);
}

#[test]
fn rl_trainers_backload_weights_onto_the_gpu() {
    let text = "Traceback (most recent call last):\n  \
                File \"/w/Open-Reasoner-Zero/orz/ppo/trainer.py\", line 70, in train\n    \
                await self._backload_vllm_engines()\n  \
                File \"/w/Open-Reasoner-Zero/orz/ppo/trainer.py\", line 1289, in \
                _backload_vllm_engines\n    await asyncio.gather(*backload_tasks)\n"
        .to_string()
        + TORCH_OOM;
    assert_eq!(phase(&text), Phase::WeightsLoad);
    let text = "Traceback (most recent call last):\n  \
                File \"/w/Open-Reasoner-Zero/orz/ppo/trainer.py\", line 70, in train\n    \
                await self.make_experience()\n"
        .to_string()
        + TORCH_OOM;
    assert_eq!(phase(&text), Phase::TrainingStep);
}

#[test]
fn trtllms_executor_creation_encloses_start_up() {
    let frames = "Traceback (most recent call last):\n  \
                  File \"/usr/lib/python3/tensorrt_llm/executor/worker.py\", line 364, in \
                  worker_main\n    worker = worker_cls(\n  \
                  File \"/usr/lib/python3/tensorrt_llm/executor/base_worker.py\", line 177, in \
                  setup_engine\n    self.engine = _create_py_executor(\n  \
                  File \"/usr/lib/python3/tensorrt_llm/executor/base_worker.py\", line 150, in \
                  _create_py_executor\n    create_executor(\n";
    assert_eq!(phase(&format!("{frames}{TORCH_OOM}")), Phase::Startup);
    // A deeper frame of the load decides.
    let text = format!(
        "{frames}  File \"/usr/lib/python3/tensorrt_llm/_torch/pyexecutor/model_engine.py\", \
         line 300, in _load_model\n    model.load_weights(weights)\n{TORCH_OOM}"
    );
    assert_eq!(phase(&text), Phase::WeightsLoad);
}

#[test]
fn only_sglangs_run_batch_serves_a_request() {
    let text = "Traceback (most recent call last):\n  \
                File \"/opt/viame/site-packages/bioharn/detect_fit.py\", line 293, in \
                run_batch\n    return_result=return_result)\n"
        .to_string()
        + TORCH_OOM;
    assert_ne!(phase(&text), Phase::Inference);
    let text = "Traceback (most recent call last):\n  \
                File \"/opt/conda/site-packages/sglang/srt/managers/scheduler.py\", line 1000, \
                in run_batch\n    result = self.tp_worker.forward_batch_generation(batch)\n"
        .to_string()
        + TORCH_OOM;
    assert_eq!(phase(&text), Phase::Inference);
}

#[test]
fn a_generation_prompt_names_no_program() {
    let text = "python generate.py --task ti2v-5B --ckpt_dir Wan2.2-TI2V-5B \\\n    \
                --prompt \"Two anthropomorphic cats in comfy boxing gear fight\"\n"
        .to_string()
        + TORCH_OOM;
    assert_eq!(engine(&text), EngineName::Pytorch);
    // The reporter's own short name for ComfyUI still names it.
    let text = "It only happens in comfy with the Wan workflow\n".to_string() + TORCH_OOM;
    assert_eq!(engine(&text), EngineName::Comfyui);
}

#[test]
fn a_program_with_ggml_as_a_submodule_is_not_llama_cpp() {
    let ggml = "what():  vk::Queue::submit: ErrorOutOfDeviceMemory\n";
    let text = format!(
        "# [Bug] Vulkan: Flux silently crashes (weight preparation OOM)\n\
         Local builds (same ggml submodule pin `e20c3a14` for all three)\n{ggml}"
    );
    assert_eq!(engine(&text), EngineName::Other);
    assert_eq!(phase(&text), Phase::WeightsLoad);
    let text = format!("# [Bug] Vulkan: silently crashes\n{ggml}");
    assert_eq!(engine(&text), EngineName::Llamacpp);
}

#[test]
fn a_bare_class_before_a_chinese_title() {
    let title = "OutOfMemoryError 云端3090训练sdxlLora报错\n\nepoch 1/25\n\
                 Traceback (most recent call last):\n  \
                 File \"/root/lora-scripts/scripts/stable/train_network.py\", line 864, in \
                 train\n    noise_pred = self.call_unet(\n  \
                 File \"/root/miniconda3/lib/python3.10/site-packages/torch/nn/modules/module.py\"\
                 , line 1553, in _wrapped_call_impl\n";
    assert!(explain_text(title).is_gpu_oom);
    // Java's heap class is not the GPU's.
    let text = "java.lang.OutOfMemoryError 云端服务报错\n";
    assert!(!explain_text(text).is_gpu_oom);
}
