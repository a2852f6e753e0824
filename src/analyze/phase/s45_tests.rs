//! Session 45: the stages and engines the first reading of ten blind batches missed (fastai's
//! training entry points, ComfyUI's layers casting their weights, latent diffusion's samplers
//! and image logging, PyTorch's device count at CUDA's start, TPUEstimator's loops, a model
//! mapped over a data set, gradients cleared in a listed cell, Slurm's task label, a sampling
//! begun, ollama's `slog` lines, and set-up listings that name no engine).

use super::s42_tests::{phase_of, MESSAGE};
use crate::analyze::explain::explain_text;
use crate::model::explain::Phase;
use crate::model::failure::EngineName;

#[test]
fn fastai_comfyui_and_latent_diffusion_frames_name_the_stage() {
    let lr_find = format!(
        "RuntimeError                              Traceback (most recent call last)\n\
         <ipython-input-31-d81c6bd29d71> in <module>()\n----> 1 learn.lr_find()\n\n{MESSAGE}\n"
    );
    assert_eq!(explain_text(&lr_find).phase.failed_in, Phase::TrainingStep);
    let comfy = format!(
        "  File \"/mnt/c/ComfyUI/comfy/ops.py\", line 1408, in forward\n    output = \
         self.forward_comfy_cast_weights(input)\n  File \"/mnt/c/ComfyUI/comfy/ops.py\", line \
         1332, in forward_comfy_cast_weights\n    with CastBiasWeightContext(self) as (w, b):\n  \
         File \"/mnt/c/ComfyUI/comfy/ops.py\", line 426, in cast_bias_weight\n    weight = \
         weight.to(dtype=dtype)\n{MESSAGE}\n"
    );
    assert_eq!(explain_text(&comfy).phase.failed_in, Phase::Inference);
    // Images sampled for the logger between training steps.
    let logging = format!(
        "When training, 15654MiB of the total GPU memory are used.\n```\n  File \
         \"/home/u/ControlNet/cldm/cldm.py\", line 397, in log_images\n    samples_cfg, _ = \
         self.sample_log(cond=cond)\n  File \"/home/u/ControlNet/cldm/cldm.py\", line 413, in \
         sample_log\n    samples, inter = ddim_sampler.sample(50, 4, shape, cond)\n  File \
         \"/home/u/ControlNet/ldm/models/diffusion/ddim.py\", line 103, in sample\n    samples \
         = self.ddim_sampling(c, size)\n{MESSAGE}\n```\n"
    );
    assert_eq!(explain_text(&logging).phase.failed_in, Phase::Inference);
}

#[test]
fn cudas_device_count_and_tpu_estimators_loops_name_the_stage() {
    let count = "/x/torch/cuda/__init__.py:129: UserWarning: CUDA initialization: Unexpected \
                 error from cudaGetDeviceCount(). Did you run some cuda functions before calling \
                 NumCudaDevices() that might have already set an error? Error 2: out of memory \
                 (Triggered internally at /pytorch/c10/cuda/CUDAFunctions.cpp:109.)\n";
    let report = explain_text(count);
    assert!(report.is_gpu_oom);
    assert_eq!(report.phase.failed_in, Phase::Startup);
    let predict = "ResourceExhaustedError: OOM when allocating tensor with shape[25000,30522] \
                   and type float on /job:localhost/replica:0/task:0/device:GPU:0 by allocator \
                   GPU_0_bfc\n\nINFO:tensorflow:prediction_loop marked as finished\n\
                   WARNING:tensorflow:Reraising captured error\n";
    assert_eq!(explain_text(predict).phase.failed_in, Phase::Inference);
    let train = predict.replace("prediction_loop", "training_loop");
    assert_eq!(explain_text(&train).phase.failed_in, Phase::TrainingStep);
}

#[test]
fn a_caller_cell_shows_a_mapped_model_or_a_training_loop() {
    let mapped = format!(
        "RuntimeError                              Traceback (most recent call last)\n\
         /tmp/ipykernel_34/3668832236.py in <module>\n      1 #hide_output\n----> 2 \
         emotions_hidden = emotions_encoded.map(extract_hidden_states, batched=True)\n\n\
         {MESSAGE}\n"
    );
    assert_eq!(explain_text(&mapped).phase.failed_in, Phase::Inference);
    // A function that names no model's outputs decides nothing.
    let tokenized = mapped.replace(
        "emotions_hidden = emotions_encoded.map(extract_hidden_states",
        "emotions_hidden = emotions.map(tokenize",
    );
    assert_eq!(explain_text(&tokenized).phase.failed_in, Phase::Unknown);
    let cell = format!(
        "OutOfMemoryError                          Traceback (most recent call last)\n\
         Cell In[18], line 33\n     30 model.zero_grad()\n     32 # forward pass\n---> 33 res \
         = model(b_input_ids, attention_mask=b_input_mask)\n\nFile /opt/venv/lib/python3.12/\
         site-packages/torch/nn/modules/module.py:1775, in Module._wrapped_call_impl(self, \
         *args, **kwargs)\n   1773 if self._compiled_call_impl is not None:\n-> 1775     \
         return self._call_impl(*args, **kwargs)\n\n{MESSAGE}\n"
    );
    assert_eq!(explain_text(&cell).phase.failed_in, Phase::TrainingStep);
    let plain = cell.replace("model.zero_grad()", "print(len(batch))");
    assert_eq!(explain_text(&plain).phase.failed_in, Phase::Unknown);
}

#[test]
fn a_slurm_label_and_a_sampling_begun_leave_the_stage_readable() {
    let text = format!(
        "0: TRAIN [0][10/16]\tTime 0.278 (0.268)\tTok/s 7485 (6683)\n0: Running validation on \
         dev set\n{MESSAGE}\n"
    );
    assert_eq!(explain_text(&text).phase.failed_in, Phase::Inference);
    assert_eq!(
        phase_of("It fails when it starts running DDIM sampling"),
        Phase::Inference
    );
    assert_eq!(phase_of("when it starts sampling"), Phase::Inference);
}

#[test]
fn ollamas_slog_lines_name_it_and_set_up_listings_name_no_engine() {
    let text = format!(
        "time=2024-03-07T10:19:15.234+03:00 level=INFO source=dyn_ext_server.go:150 \
         msg=\"Initializing llama server\"\n{MESSAGE}\n"
    );
    assert_eq!(explain_text(&text).engine.name, EngineName::Ollama);
    for listing in [
        "pytorch-lightning             1.7.7",
        "ENGINE_DIR=\".\" # the path that contains engine folders from TensorRT-LLM.",
        "I tensorflow/core/platform/cpu_feature_guard.cc:193] This TensorFlow binary is \
         optimized to use available CPU instructions.",
        "To enable them in other operations, rebuild TensorFlow with the appropriate compiler \
         flags.",
    ] {
        let text = format!("{listing}\n{MESSAGE}\n");
        assert_eq!(
            explain_text(&text).engine.name,
            EngineName::Pytorch,
            "{listing}"
        );
    }
}

#[test]
fn progress_lines_of_slowfast_a_web_ui_and_a_generation_name_the_stage() {
    let test_iter = format!(
        "[INFO: logging.py:   67]: json_stats: {{\"_type\": \"val_iter\", \"epoch\": \"3/196\", \
         \"iter\": \"20/300\"}}\n{MESSAGE}\n"
    );
    assert_eq!(explain_text(&test_iter).phase.failed_in, Phase::Inference);
    let train_iter = test_iter.replace("val_iter", "train_iter");
    assert_eq!(
        explain_text(&train_iter).phase.failed_in,
        Phase::TrainingStep
    );
    let console = format!(
        "txt2img: mouses conquering the mars\n100%|██████████| 30/30 [00:10<00:00, 2.9it/s]\n\
         *** Error\n{MESSAGE}\n"
    );
    assert_eq!(explain_text(&console).phase.failed_in, Phase::Inference);
    let generate =
        format!("*** Starting to generate 50 tokens with bs=2\n*** Running generate\n{MESSAGE}\n");
    assert_eq!(explain_text(&generate).phase.failed_in, Phase::Inference);
}

#[test]
fn a_prediction_script_an_evaluation_and_epochs_in_the_reporters_words() {
    assert_eq!(
        phase_of(
            "I ran `CUDA_VISIBLE_DEVICES=0 python pred.py --model chatglm3-6b-32k` and got OOM"
        ),
        Phase::Inference
    );
    assert_eq!(
        phase_of("I get CUDA OOM when trying to evaluate Llama-8B on HAE-RAE benchmark"),
        Phase::Inference
    );
    assert_eq!(
        phase_of("after 10 epochs we have below runtime Error"),
        Phase::TrainingStep
    );
    assert_eq!(phase_of("Number of epochs: 10"), Phase::Unknown);
    // A question for a way to do something names no stage that failed.
    for asked in [
        "Or is there a way to directly give a value for `max_memory` when loading the model ?",
        "How can I avoid this when training?",
    ] {
        assert_eq!(phase_of(asked), Phase::Unknown, "{asked}");
    }
    assert_eq!(
        phase_of("Why do I get OOM when loading the model?"),
        Phase::WeightsLoad
    );
}

#[test]
fn an_evaluation_named_as_a_stage_and_the_step_of_training() {
    for words in [
        "It goes OOM at eval stage",
        "(Only with val stage)",
        "OOM in the validation stage",
    ] {
        assert_eq!(phase_of(words), Phase::Inference, "{words}");
    }
    assert_eq!(phase_of("the interval stage"), Phase::Unknown);
    assert_eq!(
        phase_of("The error was got in the step of training"),
        Phase::TrainingStep
    );
}

#[test]
fn tensorflows_log_lines_stand_between_a_stage_line_and_the_failure() {
    let text = "loading model and labels\n2023-03-15 06:09:56.391024: I tensorflow/core/\
                platform/cpu_feature_guard.cc:193] This TensorFlow binary is optimized to use \
                available CPU instructions.\nTo enable them in other operations, rebuild \
                TensorFlow with the appropriate compiler flags.\n2023-03-15 06:09:57.022658: I \
                tensorflow/stream_executor/cuda/cuda_driver.cc:733] failed to allocate 20.79G \
                (22317891584 bytes) from device: CUDA_ERROR_OUT_OF_MEMORY: out of memory\n";
    let report = explain_text(text);
    assert!(report.is_gpu_oom);
    assert_eq!(report.phase.failed_in, Phase::WeightsLoad);
}

#[test]
fn a_run_timed_before_the_failure_and_an_inference_pass_inside_training() {
    for words in [
        "It crashes after running for 2 hours",
        "it crashes after running for 17.5 picoseconds",
    ] {
        assert_eq!(phase_of(words), Phase::Inference, "{words}");
    }
    let text = format!(
        "  File \"/x/fme/fcn_training/train.py\", line 310, in train\n    \
         self.inference_one_epoch()\n  File \"/x/fme/fcn_training/train.py\", line 402, in \
         inference_one_epoch\n    stepper.run_on_batch(batch)\n{MESSAGE}\n"
    );
    assert_eq!(explain_text(&text).phase.failed_in, Phase::Inference);
}
