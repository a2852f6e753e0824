//! Session 49: the stages the first reading of the session's blind batches missed (ComfyUI's
//! dynamic VRAM loader and its scaled-fp8 model build, a Ray task's own method, a loader named
//! for a model's part, a test or eval script named in words, Keras' predict named without its
//! parentheses, a stage said to work before the turn to the failure, and vLLM's V2 warm-up).

use super::s42_tests::{phase_of, MESSAGE};
use crate::analyze::explain::explain_text;
use crate::model::explain::Phase;
use crate::model::failure::EngineName;

const COMFY_OOM: &str = "[ERROR] !!! Exception during processing !!! Allocation on device 0 would \
                         exceed allowed memory. (out of memory)\nCurrently allocated     : 4.89 \
                         GiB\nRequested               : 6.24 GiB\nDevice limit            : 23.99 \
                         GiB\n";

#[test]
fn comfyuis_dynamic_vram_line_ends_the_load() {
    // ComfyUI 2026: `Model X prepared for dynamic VRAM loading. NMB Staged.` in place of
    // `loaded completely`; the sampler's bar after it is the generation.
    let text = format!(
        "[INFO] got prompt\n[INFO] Requested to load MiniMaxH3\n[INFO] 0 models unloaded.\n\
         [INFO] Model MiniMaxH3 prepared for dynamic VRAM loading. 19995MB Staged. 208 patches \
         attached.\n 67%|██████████████████████                | 4/6 [04:50<02:25,\n{COMFY_OOM}"
    );
    let report = explain_text(&text);
    assert_eq!(report.engine.name, EngineName::Comfyui);
    assert_eq!(report.phase.failed_in, Phase::Inference);
    // Staged and nothing run yet: the load had not ended before the failure.
    let loading = format!("[INFO] got prompt\n[INFO] Requested to load MiniMaxH3\n{COMFY_OOM}");
    assert_eq!(explain_text(&loading).phase.failed_in, Phase::WeightsLoad);
    // The phrase in a sentence is not the loader's line.
    assert!(!crate::parse::engine_log::comfy_load_finished(
        "I think the model prepared for dynamic VRAM loading is too big"
    ));
}

#[test]
fn comfyuis_scaled_fp8_build_opens_a_load() {
    let text = "got prompt\nRequested to load WanVAE\n0 models unloaded.\nloaded partially 128.0 \
         127.9998779296875 0\nUsing scaled fp8: fp8 matrix mult: False, scale input: False\n\
         !!! Exception during processing !!! Allocation on device\nTraceback (most recent call \
         last):\n  File \"G:\\ComfyUI\\execution.py\", line 496, in execute\n\
         torch.OutOfMemoryError: Allocation on device\n";
    assert_eq!(explain_text(text).phase.failed_in, Phase::WeightsLoad);
}

#[test]
fn a_ray_tasks_method_is_the_innermost_frame() {
    let text = "Traceback (most recent call last):\n  File \"/x/verl/trainer/main.py\", line 104, \
                in run\n    trainer.fit()\n  File \"/x/verl/trainer/ray_trainer.py\", line 631, \
                in fit\n    gen_batch_output = self.actor_rollout_wg.generate_sequences(\n  File \
                \"/x/verl/single_controller/ray/base.py\", line 47, in func\n    output = \
                ray.get(output)\nray.exceptions.RayTaskError(OutOfMemoryError): \
                ray::WorkerDict.actor_rollout_generate_sequences() (pid=3334785, \
                ip=192.168.1.45)\n";
    assert_eq!(explain_text(text).phase.failed_in, Phase::Inference);
    // A task that trains says so.
    let train = "Traceback (most recent call last):\n  File \"/x/run.py\", line 3, in main\n    \
                 ray.get(actor.train.remote())\nray.exceptions.RayTaskError(OutOfMemoryError): \
                 ray::DREAMERTrainer.train() (pid=1)\n";
    assert_eq!(explain_text(train).phase.failed_in, Phase::TrainingStep);
}

#[test]
fn a_loader_named_for_a_models_part_is_a_load() {
    use super::user_code::name_phase;
    for name in [
        "load_ideogram4_text_encoder",
        "load_vae",
        "build_unet",
        "init_lora",
    ] {
        assert_eq!(name_phase(name), Some(Phase::WeightsLoad), "{name}");
    }
    // `get` and `prepare` name an encoder's inputs or outputs as often.
    for name in ["get_encoder_output", "prepare_encoder_inputs"] {
        assert_eq!(name_phase(name), None, "{name}");
    }
}

#[test]
fn a_test_or_eval_script_named_in_words_is_inference() {
    for words in [
        "I meet CUDA out of memory when I run the test code.",
        "I get OOM when I run the eval script.",
        "When I try to use the eval code, I get out of memory.",
    ] {
        assert_eq!(phase_of(words), Phase::Inference, "{words}");
    }
    assert_eq!(
        phase_of("If I don't use the eval script I get OOM."),
        Phase::Unknown
    );
}

#[test]
fn kerass_predict_named_without_parentheses_is_inference() {
    for words in [
        "When I call `model.predict` it throws an OOM error.",
        "When I use the predict function it throws an OOM error.",
    ] {
        assert_eq!(phase_of(words), Phase::Inference, "{words}");
    }
}

#[test]
fn a_stage_said_to_work_is_not_the_failures() {
    let text = "While training I also use the generator and everything works as expected. But \
                if I use the predict function from the keras model on large data sets, it \
                throws an OOM error.";
    assert_eq!(phase_of(text), Phase::Inference);
    assert_eq!(
        phase_of("While training it works fine for 3 epochs, then it throws OOM."),
        Phase::Unknown
    );
    // `fine-tune` is no success, and a comma ends the clause.
    assert_eq!(
        phase_of("I'm currently trying to train/fine-tune my s-bert, but even with a batch size of 16, i get the error:"),
        Phase::TrainingStep
    );
    assert_eq!(
        phase_of("it runs out of memory on my 8GB GPU when loading the model, not sure why it works on yours"),
        Phase::WeightsLoad
    );
    // A hypothetical keeps its guard.
    assert_eq!(
        phase_of("If I run inference on two cards, would it still run out of memory?"),
        Phase::Unknown
    );
}

#[test]
fn vllms_v2_runner_warm_up_is_profiling() {
    let text = format!(
        "Traceback (most recent call last):\n  File \"/x/vllm/v1/worker/gpu_worker.py\", line \
         1, in compile_or_warm_up_model\n  File \"/x/vllm/v1/worker/gpu/warmup.py\", line 40, in \
         warmup_kernels\n  File \"/x/vllm/v1/worker/gpu/model_runner.py\", line 1407, in \
         sample_tokens\n{MESSAGE}"
    );
    assert_eq!(explain_text(&text).phase.failed_in, Phase::Profiling);
}

#[test]
fn tensorflows_class_as_the_object_of_a_verb_is_a_report() {
    let text = "But if I use the predict function from the keras model on large data sets, the \
                model throws a ResourceExhaustedError after the predictions\n```\n~/lib/python3.7/\
                site-packages/tensorflow/python/keras/engine/training.py in predict(self, x)\n   \
                1612             callbacks.on_predict_batch_end(end_step)\n```\n";
    assert!(explain_text(text).is_gpu_oom);
}

#[test]
fn a_chinese_start_that_cannot_happen_is_start_up() {
    assert_eq!(
        phase_of("显存非常容易爆，八张A800也启动不起来么？"),
        Phase::Startup
    );
    assert_eq!(phase_of("模型启动不了，显存不足"), Phase::Startup);
}

#[test]
fn ggml_cudas_pool_allocation_is_a_batch_evaluated() {
    let text = "CUDA error: out of memory\n  current device: 0, in function alloc at \
                //ml/backend/ggml/ggml/src/ggml-cuda/ggml-cuda.cu:424\n  \
                ggml_cuda_device_malloc(&ptr, look_ahead_size, device)\n\
                //ml/backend/ggml/ggml/src/ggml-cuda/ggml-cuda.cu:84: CUDA error\n";
    assert_eq!(explain_text(text).phase.failed_in, Phase::Inference);
    // The op dispatch fails on a missing kernel as often: no stage from it alone.
    let kernel = "CUDA error: out of memory\n  current device: 0, in function \
                  ggml_cuda_compute_forward at /x/ggml-cuda/ggml-cuda.cu:2313\n";
    assert_eq!(explain_text(kernel).phase.failed_in, Phase::Unknown);
}

#[test]
fn a_program_that_will_not_launch_is_start_up() {
    for words in [
        "I have audioLDM2 which refuses to launch.",
        "The app fails to launch with this error:",
        "It won't start anymore:",
    ] {
        assert_eq!(phase_of(words), Phase::Startup, "{words}");
    }
    // A kernel that failed to launch is the GPU's error, not the program's start.
    assert_eq!(
        phase_of("RuntimeError: INTERNAL: Failed to launch CUDA kernel: fusion_29 with block"),
        Phase::Unknown
    );
    assert_eq!(
        phase_of("If it doesn't start, reduce the batch"),
        Phase::Unknown
    );
}

#[test]
fn jaxlibs_vendored_allocator_is_jaxs() {
    let jax = "2022-08-05 10:00:26.833817: W external/org_tensorflow/tensorflow/core/\
               common_runtime/bfc_allocator.cc:479] Allocator (GPU_0_bfc) ran out of memory \
               trying to allocate 9.00MiB (rounded to 9437184)requested by op \n";
    assert_eq!(explain_text(jax).engine.name, EngineName::Jax);
    // TensorFlow's own build, and TensorFlow Serving's server, are TensorFlow's.
    let tf = "2023-01-01 W tensorflow/core/common_runtime/bfc_allocator.cc:479] Allocator \
              (GPU_0_bfc) ran out of memory trying to allocate 3.00GiB\n";
    assert_eq!(explain_text(tf).engine.name, EngineName::Tensorflow);
    let serving = format!("/usr/bin/tensorflow_model_server --port=8500 --model_name=m\n{jax}");
    assert_eq!(explain_text(&serving).engine.name, EngineName::Tensorflow);
}
