//! Session 41: the stages, figures and families the first reading of five blind batches missed
//! (a sampler node that moves its model onto the GPU, DeepSpeed ZeRO's gradient hooks, `on step
//! N`, `when I use X to train`, a script the reporter says they ran, a model's `.generate(`
//! named in prose, Faiss 1.7's device and a wrapped `StandardGpuResources` message, the notebook
//! services' notices of the VM's RAM).

use crate::analyze::explain::explain_text;
use crate::model::explain::Phase;
use crate::model::failure::{EngineName, OomKind};

fn phase(text: &str) -> Phase {
    explain_text(text).phase.failed_in
}

const MOVE_FRAMES: &str =
    "  File \"C:\\ComfyUI\\custom_nodes\\x-flux-comfyui\\nodes.py\", line 320, \
in sampling\n    inmodel.diffusion_model.to(device)\n  File \"C:\\python_embeded\\Lib\\\
site-packages\\torch\\nn\\modules\\module.py\", line 1173, in to\n    return self._apply(convert)\n\
  File \"C:\\python_embeded\\Lib\\site-packages\\torch\\nn\\modules\\module.py\", line 779, in \
_apply\n    module._apply(fn)\n";

#[test]
fn a_sampler_node_that_moves_its_model_onto_the_gpu_fails_loading_it() {
    let moved = format!(
        "Error occurred when executing XlabsSampler:\n\nAllocation on device\n\n{MOVE_FRAMES}\
         torch.OutOfMemoryError: Allocation on device\n"
    );
    assert_eq!(phase(&moved), Phase::WeightsLoad);
    // The node's name still decides where the frames show the sampling itself.
    let sampling = "Error occurred when executing XlabsSampler:\n\nAllocation on device\n\n  \
                    File \"C:\\ComfyUI\\comfy\\samplers.py\", line 700, in sample\n    \
                    samples = sampler.sample(x)\ntorch.OutOfMemoryError: Allocation on device\n";
    assert_eq!(phase(sampling), Phase::Inference);
}

#[test]
fn zeros_gradient_hooks_run_in_a_training_steps_backward() {
    let zero = "  File \"/x/deepspeed/runtime/zero/stage_1_and_2.py\", line 910, in \
                reduce_partition_and_remove_grads\n    \
                self.reduce_ready_partitions_and_remove_grads(param, i)\n  File \
                \"/x/deepspeed/runtime/zero/stage_1_and_2.py\", line 1408, in reduce_ipg_grads\n\
                \x20   self.copy_grads_in_partition(param)\ntorch.OutOfMemoryError: CUDA out of \
                memory. Tried to allocate 20.00 MiB.\n";
    assert_eq!(phase(zero), Phase::TrainingStep);
    // The same name outside DeepSpeed's ZeRO decides nothing.
    let elsewhere = zero.replace("deepspeed/runtime/zero", "mylib/opt");
    assert_eq!(phase(&elsewhere), Phase::Unknown);
}

const MESSAGE: &str =
    "OutOfMemoryError: CUDA out of memory. Tried to allocate 1.20 GiB. GPU 0 has \
a total capacity of 47.53 GiB of which 1.22 GiB is free.\n";

#[test]
fn a_training_failed_on_a_numbered_step() {
    assert_eq!(
        phase(&format!(
            "But the training is failed on step 10 with the following error:\n\n{MESSAGE}"
        )),
        Phase::TrainingStep
    );
    assert_eq!(
        phase(&format!("It crashes on epoch 3 every time:\n{MESSAGE}")),
        Phase::TrainingStep
    );
    // `on batch 16` may name a batch size, not how far a training got.
    assert_eq!(
        phase(&format!("It crashes on batch 16 every time:\n{MESSAGE}")),
        Phase::Unknown
    );
}

#[test]
fn the_means_of_a_clause_of_time_with_the_stage_as_its_purpose() {
    let nnunet = "When I use 24G Nvidia Titan RTX GPU to train the  Task10_Colon data, but the \
                  nnunet said: \n    RuntimeError: CUDA out of memory. Tried to allocate 5.63 GiB \
                  (GPU 0; 23.76 GiB total capacity; 17.47 GiB already allocated; 5.50 GiB free; \
                  155.50 KiB cached)\n";
    assert_eq!(phase(nnunet), Phase::TrainingStep);
    // Advice (`you could use … to train`) and a use without the reporter are not read.
    assert_eq!(
        phase(&format!(
            "You could use a bigger GPU to train the model.\n{MESSAGE}"
        )),
        Phase::Unknown
    );
    assert_eq!(
        phase(&format!(
            "The paper says they use 8 GPUs to train the model.\n{MESSAGE}"
        )),
        Phase::Unknown
    );
}

#[test]
fn a_script_the_reporter_says_they_ran() {
    let ran = format!("When I run file infer_flux_regional.py. An error appears:\n\n{MESSAGE}");
    assert_eq!(phase(&ran), Phase::Inference);
    // A title that could not run the example names no stage.
    let not_run = format!(
        "OutOfMemory - Not able to run the text-generation.py example on V100\n\n{MESSAGE}"
    );
    assert_eq!(phase(&not_run), Phase::Unknown);
    // A training script the reporter ran is no inference.
    let train = format!("When I run train_lora.py it fails:\n\n{MESSAGE}");
    assert_ne!(phase(&train), Phase::Inference);
}

#[test]
fn a_models_generate_named_in_prose_as_where_it_failed() {
    let text = "When using the example code any prompt results in a out of memory error. The \
                error happens specifically on the line model.generate(prompt)\n";
    assert_eq!(phase(text), Phase::Inference);
}

#[test]
fn model_generate_names_transformers_only_as_its_own_name() {
    let frames = |call: &str| {
        format!(
            "Traceback (most recent call last):\n  File \"/app/run.py\", line 12, in main\n    \
             samples = {call}(\n{MESSAGE}"
        )
    };
    assert_eq!(
        explain_text(&frames("self.model.generate")).engine.name,
        EngineName::Transformers
    );
    assert_ne!(
        explain_text(&frames("wan_model.generate")).engine.name,
        EngineName::Transformers
    );
}

#[test]
fn faiss_17s_device_and_a_wrapped_resources_message() {
    let report = explain_text(
        "RuntimeError: Error in virtual void* faiss::gpu::StandardGpuResourcesImpl::allocMemory(\
         const faiss::gpu::AllocRequest&) at /x/faiss/gpu/StandardGpuResources.cpp:443: Error: \
         'err == cudaSuccess' failed: Failed to cudaMalloc 536870912 bytes on device 1 (error 2 \
         out of memory\nOutstanding allocations:\n",
    );
    let figures = report.oom.expect("a GPU OOM with figures");
    assert_eq!(figures.gpu_index.map(|gpu| gpu.get()), Some(1));
    assert_eq!(
        figures.tried_to_allocate_bytes.map(|b| b.0),
        Some(536_870_912)
    );
    // Another status than 2 is not the GPU's memory.
    let other = explain_text(
        "Failed to cudaMalloc 536870912 bytes on device 1 (error 700 an illegal memory access)\n",
    );
    assert!(other.oom.is_none());

    let wrapped = explain_text(
        "Error in virtual void* faiss::gpu::StandardGpuResourcesImpl::allocMemory(const \
         faiss::gpu::AllocRequest&) at /home/conda/feedstock_root/\nbuild_artifacts/faiss/gpu/\
         StandardGpuResources.cpp:452: Error: 'err == cudaSuccess' failed: StandardGpuResources: \
         alloc\n fail type FlatData dev 2 space Device stream 0 size 2764800000 bytes (cudaMalloc \
         error out of memory [2])\n",
    );
    assert_eq!(wrapped.ooms.len(), 1);
    let figures = wrapped.oom.expect("a GPU OOM with figures");
    assert_eq!(figures.gpu_index.map(|gpu| gpu.get()), Some(2));
    assert_eq!(
        figures.tried_to_allocate_bytes.map(|b| b.0),
        Some(2_764_800_000)
    );
}

#[test]
fn the_notebook_services_notices_are_the_vms_ram() {
    for notice in [
        "Your session crashed after using all available RAM.",
        "Your notebook tried to allocate more memory than is available. It has restarted.",
    ] {
        let report = explain_text(&format!(
            "I am trying to train the model in Kaggle, but I am facing this:\n{notice}\n"
        ));
        assert!(!report.is_gpu_oom, "{notice}");
        assert_eq!(
            report.ooms.first().map(|m| m.kind),
            Some(OomKind::HostMemory)
        );
        // Training words without its progress show the job, not the stage, of the host's memory.
        assert_eq!(report.phase.failed_in, Phase::Unknown);
    }
}

// --- The second round (blind batches s41f-j). ---

const TORCH_MESSAGE: &str = "torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate \
86.00 MiB (GPU 0; 23.69 GiB total capacity; 23.32 GiB already allocated; 5.88 MiB free; 23.32 GiB \
reserved in total by PyTorch)\n";

fn traceback(frames: &str) -> String {
    format!("Traceback (most recent call last):\n{frames}{TORCH_MESSAGE}")
}

#[test]
fn set_up_frames_of_lightning_apex_and_fairseq_are_start_up() {
    let lightning = traceback(
        "  File \"my_code.py\", line 12, in main\n    trainer.fit(model)\n  File \
         \"venv/lib/python3.8/site-packages/pytorch_lightning/trainer/trainer.py\", line 424, in \
         fit\n    self.accelerator_backend.setup(model)\n",
    );
    assert_eq!(phase(&lightning), Phase::Startup);
    // The fit's own loop still is a training step.
    let step = traceback(
        "  File \"my_code.py\", line 12, in main\n    trainer.fit(model)\n  File \
         \"venv/lib/python3.8/site-packages/pytorch_lightning/trainer/trainer.py\", line 424, in \
         fit\n    self.run_train()\n",
    );
    assert_eq!(phase(&step), Phase::TrainingStep);
    let apex = traceback(
        "  File \"train.py\", line 40, in <module>\n    model, optimizer = amp.initialize(model, \
         optimizer)\n  File \"/x/site-packages/apex/amp/frontend.py\", line 358, in initialize\n\
         \x20   return _initialize(models, optimizers)\n  File \
         \"/x/site-packages/apex/amp/_initialize.py\", line 230, in _initialize\n    \
         max_loss_scale=_amp_state.max_loss_scale))\n",
    );
    assert_eq!(phase(&apex), Phase::Startup);
    let fairseq = traceback(
        "  File \"/x/fairseq_cli/train.py\", line 63, in main\n    args.distributed_rank = \
         distributed_utils.distributed_init(args)\n  File \"/x/fairseq/distributed_utils.py\", \
         line 99, in distributed_init\n    dist.all_reduce(torch.zeros(1).cuda())\n",
    );
    assert_eq!(phase(&fairseq), Phase::Startup);
}

#[test]
fn an_onnx_export_statement_is_a_format_conversion() {
    let export = traceback(
        "  File \"export_qwen_naive.py\", line 175, in <module>\n    export_qwen(args)\n  File \
         \"export_qwen_naive.py\", line 109, in export_qwen_to_single_onnx\n    \
         torch.onnx.export(\n",
    );
    assert_eq!(phase(&export), Phase::FormatConversion);
}

#[test]
fn the_no_grad_decorator_does_not_hide_the_method_called_above_it() {
    let vllm = traceback(
        "  File \"/x/vllm/worker/worker.py\", line 125, in warm_up_model\n    \
         self.model_runner.capture_model(self.gpu_cache)\n  File \
         \"/x/torch/utils/_contextlib.py\", line 115, in decorate_context\n    return \
         func(*args, **kwargs)\n",
    );
    assert_eq!(phase(&vllm), Phase::CudaGraphCapture);
    // Another frame printed below the call shows what ran instead.
    let other = vllm.replace("torch/utils/_contextlib.py", "mylib/hooks.py");
    assert_ne!(phase(&other), Phase::CudaGraphCapture);
}

const GALLOCR: &str = "ggml_backend_cuda_buffer_type_alloc_buffer: allocating 4514.05 MiB on \
device 0: cudaMalloc failed: out of memory\nggml_gallocr_reserve_n: failed to allocate CUDA0 \
buffer of size 4733328896\n";

#[test]
fn a_compute_buffer_reserved_again_for_a_request_is_inference() {
    let image = format!("srv  process_chun: processing image...\n{GALLOCR}");
    assert_eq!(phase(&image), Phase::Inference);
    let ollama = format!(
        "time=2025-05-18T08:36:01.003Z level=DEBUG source=cache.go:136 msg=\"loading cache \
         slot\" id=0 cache=57 prompt=1227 used=20 remaining=1207\n{GALLOCR}"
    );
    assert_eq!(phase(&ollama), Phase::Inference);
    // Without a request before it, the reservation is the context's (profiling).
    assert_eq!(phase(GALLOCR), Phase::Profiling);
}

const MLX: &str = "libc++abi: terminating due to uncaught exception of type std::runtime_error: \
Attempting to allocate 51619840000 bytes which is greater than the maximum allowed buffer size of \
21743271936 bytes.\nFatal Python error: Aborted\n\n";

#[test]
fn faulthandler_frames_and_a_buffer_past_metals_largest() {
    let report = explain_text(&format!(
        "{MLX}Thread 0x00000001e136dc40 (most recent call first):\n  File \
         \"/x/mlx_vlm/models/qwen2_vl/qwen2_vl.py\", line 81 in _merge_input_ids_with_image_features\n  \
         File \"/x/mlx_vlm/utils.py\", line 888 in generate_step\n  File \"/x/mlx_vlm/utils.py\", \
         line 1021 in generate\n"
    ));
    assert_eq!(report.phase.failed_in, Phase::Inference);
    assert_eq!(
        report.verdict.cause,
        crate::model::explain::Cause::RequestLargerThanGpu
    );
    // A request under the largest buffer decides nothing by itself.
    let under = explain_text(
        "std::runtime_error: Attempting to allocate 1024 bytes which is greater than the maximum \
         allowed buffer size of 4096 bytes.\n",
    );
    assert_ne!(
        under.verdict.cause,
        crate::model::explain::Cause::RequestLargerThanGpu
    );
}

#[test]
fn an_attempt_to_run_a_script_named_for_running_a_model() {
    let text = format!(
        "# RuntimeError: CUDA out of memory when trying to run img2img.py\n\nsee below:\n\n\
         {TORCH_MESSAGE}"
    );
    assert_eq!(phase(&text), Phase::Inference);
}

#[test]
fn a_quantizations_layer_and_a_titles_convert_oom() {
    assert_eq!(
        phase("I get the error of CUDA out of memory at quantize layer 18\n"),
        Phase::FormatConversion
    );
    assert_eq!(
        phase("# tiny_llama convert OOM issue\n"),
        Phase::FormatConversion
    );
}

#[test]
fn a_runtime_run_inside_a_conversion_pass_is_the_conversions() {
    let olive = "[2025-08-14 10:34:38,275] [INFO] [engine.py:686:_run_pass] Running pass \
                 sq:onnxstaticquantization\n2025-08-14 10:47:21.4888608 [E:onnxruntime:, \
                 sequential_executor.cc:572 onnxruntime::ExecuteKernel] Non-zero status code \
                 returned while running MatMulNBits node. Name:'/lm_head/MatMul_Q4' Status \
                 Message: CUDA error cudaErrorMemoryAllocation:out of memory\nTraceback (most \
                 recent call last):\n  File \"/x/olive/engine/engine.py\", line 743, in \
                 _run_pass\n    output_model_config = host.run_pass(p, input_model_config)\n  \
                 File \"/x/olive/systems/local.py\", line 45, in run_pass\n    output_model = \
                 the_pass.run(model)\n";
    assert_eq!(phase(olive), Phase::FormatConversion);
}

#[test]
fn a_move_inside_a_conversion_is_the_conversions() {
    use super::{read_frames, Frame};
    let frame = |line: u64, function: &str, file: &str| Frame {
        called: false,
        line,
        function: function.to_string(),
        file: file.to_string(),
        code: None,
    };
    let frames = [
        frame(1, "quantize", "/x/auto_gptq/modeling/_base.py"),
        frame(2, "to", "/x/torch/nn/modules/module.py"),
    ];
    let read = read_frames(&frames);
    assert_eq!(
        read.decided.map(|(_, rule)| rule.phase),
        Some(Phase::FormatConversion)
    );
    // Outside a conversion the move is the weights' load.
    let alone = [frame(2, "to", "/x/torch/nn/modules/module.py")];
    assert_eq!(
        read_frames(&alone).decided.map(|(_, rule)| rule.phase),
        Some(Phase::WeightsLoad)
    );
}

// --- The third round (blind batches s41k-o). ---

#[test]
fn an_evaluation_named_in_a_code_mixed_sentence_or_said_to_fail() {
    for text in [
        "# grpo训练qwen2.5-vl-7b，eval过程会oom\n",
        "# 进入eval阶段就报OOM\n",
        "训练的时候正常，在val的时候OOM了\n",
        "Training works. Validation fails with a CUDA out of memory error\n",
    ] {
        assert_eq!(phase(text), Phase::Inference, "{text}");
    }
    // Training alone in the sentence still names the training.
    assert_eq!(phase("训练的时候OOM了\n"), Phase::TrainingStep);
}

#[test]
fn a_time_the_training_ran_before_the_failure() {
    assert_eq!(
        phase("After a couple of seconds of training it crashes with CUDA out of memory\n"),
        Phase::TrainingStep
    );
    assert_eq!(
        phase("After 2 hours of fine-tuning I get CUDA out of memory\n"),
        Phase::TrainingStep
    );
    // A time of something else is no training's progress.
    assert_eq!(
        phase("After a couple of seconds of waiting it crashes with CUDA out of memory\n"),
        Phase::Unknown
    );
}

#[test]
fn a_loader_node_and_grpo_named_with_the_failure() {
    assert_eq!(phase("# Quadruple Clip Loader OOM\n"), Phase::WeightsLoad);
    assert_eq!(phase("CUDA OUT OF MEMORY WHEN GRPO\n"), Phase::TrainingStep);
}

#[test]
fn grpo_named_in_another_clause_of_time_is_no_stage() {
    assert_eq!(
        phase(
            "CUDA out of memory. This is probably an old code from the time when GRPO was not \
             compatible with reward functions\n"
        ),
        Phase::Unknown
    );
}
