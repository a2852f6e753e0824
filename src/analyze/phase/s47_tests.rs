//! Session 47: the stages the first reading of sixteen blind batches missed (an epoch's count
//! alone on its line, burn's learner, a save after a training bar, the CUDA context and the
//! Spark executor's memory made at start-up, a trainer's step named by the reporter, a loader
//! node of an encoder, AUTOMATIC1111's starred error record, MATLAB's stack).

use super::s42_tests::{phase_of, MESSAGE};
use crate::analyze::explain::explain_text;
use crate::model::explain::Phase;
use crate::model::failure::EngineName;

#[test]
fn an_epochs_count_alone_is_the_training() {
    for begun in ["Epoch 1/10", "[1,7]<stdout>:Epoch 1/1", "Epoch 0/59"] {
        let text = format!("{begun}\n{MESSAGE}");
        assert_eq!(phase_of(&text), Phase::TrainingStep, "{begun}");
    }
    // A line that goes on is another's (a summary, a result), and so is a sentence's.
    for other in ["Epoch 1/10 done, saving", "we stopped at Epoch 3/10"] {
        let text = format!("{other}\n{MESSAGE}");
        assert_eq!(phase_of(&text), Phase::Unknown, "{other}");
    }
}

#[test]
fn burns_learner_names_its_epochs_steps() {
    let training = format!(
        "2024-03-29T14:31:18.784569Z  INFO burn_train::learner::epoch: Executing training step \
         for epoch 1\n{MESSAGE}"
    );
    assert_eq!(phase_of(&training), Phase::TrainingStep);
    let validation = format!(
        "2024-03-29T14:31:18.784569Z  INFO burn_train::learner::epoch: Executing validation \
         step for epoch 1\n{MESSAGE}"
    );
    assert_eq!(phase_of(&validation), Phase::Inference);
}

#[test]
fn the_cuda_context_and_the_spark_executors_pool_are_start_up() {
    let julia = "ERROR: Out of GPU memory\n\nStacktrace:\n  [1] throw_api_error(res::CUDA.\
                 cudaError_enum)\n    @ CUDA ~/.julia/packages/CUDA/bki2w/lib/cudadrv/error.jl:89\n  \
                 [3] cuDevicePrimaryCtxRetain\n    @ ~/.julia/packages/CUDA/bki2w/lib/utils/call.jl:26 \
                 [inlined]\n  [4] CuContext\n    @ ~/.julia/packages/CUDA/bki2w/lib/cudadrv/context.jl:55\n";
    assert_eq!(phase_of(julia), Phase::Startup);
    let spark = "java.lang.OutOfMemoryError: Could not allocate native memory: std::bad_alloc: \
                 out_of_memory: CUDA error at: rmm/mr/device/cuda_async_memory_resource.hpp: \
                 cudaErrorMemoryAllocation out of memory\n        at ai.rapids.cudf.Rmm.\
                 newCudaAsyncMemoryResource(Native Method)\n        at ai.rapids.cudf.Rmm.\
                 initialize(Rmm.java:247)\n        at com.nvidia.spark.rapids.GpuDeviceManager$.\
                 initializeRmm(GpuDeviceManager.scala:353)\n";
    assert_eq!(phase_of(spark), Phase::Startup);
    // The call's name in a sentence about something else is not a frame.
    let prose = format!("I read that cuCtxCreateFoo is slow.\n{MESSAGE}");
    assert_eq!(phase_of(&prose), Phase::Unknown);
}

#[test]
fn a_trainers_step_named_by_the_reporter_is_the_training() {
    let called = format!(
        "I tried to run rl_training.py, but got CUDA OOM error in PPOTrainer.step() \
         function.\n\n{MESSAGE}"
    );
    assert_eq!(phase_of(&called), Phase::TrainingStep);
    let ticked = format!(
        "After a few batches the `ppo_trainer.step` call fails with CUDA out of memory every \
         time.\n\n{MESSAGE}"
    );
    assert_eq!(phase_of(&ticked), Phase::TrainingStep);
}

#[test]
fn a_loader_node_of_an_encoder_loads_weights() {
    let report = format!(
        "# ComfyUI Error Report\n- **Node Type:** DownloadAndLoadHyVideoTextEncoder\n- \
         **Exception Type:** torch.OutOfMemoryError\n{MESSAGE}"
    );
    assert_eq!(phase_of(&report), Phase::WeightsLoad);
    let encode = format!(
        "# ComfyUI Error Report\n- **Node Type:** CLIPTextEncode\n- **Exception Type:** \
         torch.OutOfMemoryError\n{MESSAGE}"
    );
    assert_eq!(phase_of(&encode), Phase::Inference);
}

#[test]
fn automatic1111s_starred_record_of_a_failed_job_is_a_generation() {
    let text = format!(
        "{MESSAGE}\n\n*** Error completing request\n*** Arguments: ('task(jgo1kuv5xm4kht4)', \
         'a red cyborg', '', [], 20) {{}}\n"
    );
    assert_eq!(phase_of(&text), Phase::Inference);
}

#[test]
fn a_matlab_stacks_training_function_is_the_training() {
    let text = "Error using gpuArray/max\nOut of memory on device. To view more detail about \
                available memory on the GPU, use 'gpuDevice()'. If the problem persists, reset \
                the GPU by calling 'gpuDevice(1)'.\n\nError in vl_nnrelu (line 45)\n\nError in \
                dagnn.ReLU/forwardAdvanced (line 29)\n\nError in train_network>processEpoch \
                (line 228)\n\nError in train_cnnimageretrieval (line 66)\n";
    assert_eq!(phase_of(text), Phase::TrainingStep);
}

#[test]
fn a_scripts_epoch_bar_is_not_lightnings() {
    let colossal = format!(
        "Epoch 0:   0%|          | 5/1119698 [01:42<6209:10:15, 19.96s/it, Loss=13.5324]\n\
         {MESSAGE}"
    );
    let report = explain_text(&colossal);
    assert_eq!(report.phase.failed_in, Phase::TrainingStep);
    assert_ne!(report.engine.name, EngineName::Lightning);
    let worded = format!(
        "Training Epoch 1:  25%|██▌       | 4430/17762 [00:59<03:01, 73.34it/s, loss=3.08]\n\
         {MESSAGE}"
    );
    assert_ne!(explain_text(&worded).engine.name, EngineName::Lightning);
    let lightning = format!(
        "Epoch 0:   6%|▋         | 232/3612 [00:12<02:56, 19.15it/s, loss=nan, v_num=0]\n\
         {MESSAGE}"
    );
    assert_eq!(explain_text(&lightning).engine.name, EngineName::Lightning);
}

#[test]
fn a_one_liners_import_names_the_engine_unless_it_prints_a_version() {
    let jax = "Running `python -c \"import jax; jax.print_environment_info()\"` results in:\n\
               E0321 external/xla/xla/stream_executor/cuda/cuda_dnn.cc:535] Could not create \
               cudnn handle: CUDNN_STATUS_INTERNAL_ERROR\n";
    assert_eq!(explain_text(jax).engine.name, EngineName::Jax);
    let version =
        format!("python -c \"import transformers; print(transformers.__version__)\"\n{MESSAGE}");
    assert_ne!(explain_text(&version).engine.name, EngineName::Transformers);
}

#[test]
fn a_routers_warm_up_is_profiling() {
    let text = "2024-03-12T02:40:12.730824Z ERROR warmup{max_input_length=128 \
                max_prefill_tokens=512 max_total_tokens=512}:warmup: lorax_client: router/\
                client/src/lib.rs:34: Server error: CUDA out of memory. Tried to allocate 20.00 \
                MiB.\nError: Warmup(Generation(\"CUDA out of memory. Tried to allocate 20.00 \
                MiB.\"))\n";
    assert_eq!(phase_of(text), Phase::Profiling);
}

#[test]
fn vllms_served_requests_and_worker_tags() {
    let stream = format!(
        "vllm  | ERROR 02-11 08:25:49 serving_chat.py:661] Error in chat completion stream \
         generator.\n{MESSAGE}"
    );
    assert_eq!(phase_of(&stream), Phase::Inference);
    let tagged = "(Worker_TP0 pid=134744) ERROR 12-15 22:17:19 [multiproc_executor.py:822] \
                  torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 126.00 MiB. GPU \
                  0 has a total capacity of 31.36 GiB of which 111.00 MiB is free.\n";
    assert_eq!(explain_text(tagged).engine.name, EngineName::Vllm);
}

#[test]
fn a_lower_case_training_announcement_is_the_training() {
    let text = "Logging to /tmp/openai-2024\ncreating model and diffusion...\ntraining...\n\
                Killed\n";
    assert_eq!(phase_of(text), Phase::TrainingStep);
}

#[test]
fn onnx_runtime_genais_kv_cache_buffer_is_the_kv_cache() {
    let text = "RuntimeError: Could not allocate the key-value cache buffer of shape: [batch_size \
                (1), num_key_value_heads (8), max_length (131072), head_size (96)] for 32 layers. \
                Try reducing the max_length requested or reducing the batch size.\n";
    assert_eq!(phase_of(text), Phase::KvCacheAlloc);
}

#[test]
fn tritons_request_handler_and_feature_extraction_are_inference() {
    let triton = format!(
        "I0708 09:15:10.723230 1 grpc_server.cc:2630] Process for ModelInferHandler, rpc_ok=1, 5 \
         step START\nI0708 09:15:10.726620 1 grpc_server.cc:2623] New request handler for \
         ModelInferHandler, 6\n{MESSAGE}"
    );
    assert_eq!(phase_of(&triton), Phase::Inference);
    let extraction = format!(
        "I encountered a CUDA out-of-memory error during slide-level feature extraction with \
         256-pixel patches.\n\n{MESSAGE}"
    );
    assert_eq!(phase_of(&extraction), Phase::Inference);
}
