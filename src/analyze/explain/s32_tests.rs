//! Whole-text checks of what session 32's blind batches showed missing. Every text is
//! synthetic.

use super::explain_text;
use super::whole_text::phase;
use crate::model::explain::Phase;

/// llama.cpp prints its model buffers' sizes once they are allocated, then reads the weights
/// into them, then creates the context.
const LLAMA_BUFFERS: &str = "llm_load_tensors: offloading 32 repeating layers to GPU\n\
    llm_load_tensors: offloaded 33/33 layers to GPU\n\
    llm_load_tensors:        CPU buffer size =   250.00 MiB\n\
    llm_load_tensors:      CUDA0 buffer size = 22730.30 MiB\n";

#[test]
fn a_llama_cpp_log_cut_after_its_buffer_sizes_is_still_loading_the_weights() {
    let text = format!("CUDA error 2: out of memory (title)\n{LLAMA_BUFFERS}");
    assert_eq!(phase(&text), Phase::WeightsLoad);
    let text = format!("{LLAMA_BUFFERS}load_all_data: no device found for buffer type CPU\n");
    let report = explain_text(&format!("CUDA error: out of memory\n{text}")).phase;
    assert_eq!(report.failed_in, Phase::WeightsLoad);
}

#[test]
fn the_contexts_creation_ends_the_weights_load() {
    let text = format!(
        "{LLAMA_BUFFERS}..........................\n\
         llama_new_context_with_model: n_ctx      = 32768\n\
         llama_new_context_with_model: n_batch    = 512\n\
         ggml_backend_cuda_buffer_type_alloc_buffer: allocating 4096.00 MiB on device 0: \
         cudaMalloc failed: out of memory\n\
         llama_kv_cache_init: failed to allocate buffer for kv cache\n"
    );
    let report = explain_text(&text).phase;
    assert_eq!(report.failed_in, Phase::KvCacheAlloc);
    assert_eq!(report.last_completed, Some(Phase::WeightsLoad));
}

#[test]
fn a_serving_frames_call_of_a_stage_decides_when_the_paste_ends_there() {
    let text = "!!! Exception during processing!!! Allocation on device \n\
        Traceback (most recent call last):\n\
        \x20 File \"/x/ComfyUI/comfy_extras/nodes_custom_sampler.py\", line 612, in sample\n\
        \x20   samples = guider.sample(noise.generate_noise(latent), latent_image, sampler)\n\
        \x20 File \"/x/ComfyUI/comfy/samplers.py\", line 706, in sample\n\
        \x20   self.inner_model, self.conds, self.loaded_models = \
        comfy.sampler_helpers.prepare_sampling(self.model_patcher, noise.shape, self.conds)\n";
    assert_eq!(phase(text), Phase::WeightsLoad);
    // The same frame calling something no rule reads stays the sampling it is.
    let sampling = text.replace("prepare_sampling", "sampling_function");
    assert_eq!(phase(&sampling), Phase::Inference);
}

#[test]
fn a_stage_the_job_started_before_the_error() {
    let tail = "\n\ntorch.OutOfMemoryError: CUDA out of memory. Tried to allocate 20.00 MiB. \
                GPU 0 has a total capacity of 14.75 GiB of which 3.06 MiB is free.\n";
    let cases = [
        (
            "It started inference half of the test data and then displayed this error:",
            Phase::Inference,
        ),
        (
            "It began the training and after a few minutes crashed with OOM:",
            Phase::TrainingStep,
        ),
        // A server started is the start-up, not its requests.
        (
            "I started the inference server and then got this error:",
            Phase::Unknown,
        ),
        // Not the failure's sentence.
        ("It started inference on the test data.", Phase::Unknown),
    ];
    for (words, want) in cases {
        assert_eq!(phase(&format!("{words}{tail}")), want, "{words}");
    }
}

#[test]
fn a_message_logged_with_its_traceback_under_it_takes_those_frames() {
    let text =
        "2024-01-18 21:27:53,300 xinference.core.model 35043 ERROR    Model actor is out of \
                memory.\n\
        Traceback (most recent call last):\n\
        \x20 File \"/e/lib/python3.10/site-packages/xinference/core/model.py\", line 99, in \
        _async_wrapper\n\
        \x20   return await fn(*args, **kwargs)\n\
        \x20 File \"/e/lib/python3.10/site-packages/xinference/core/model.py\", line 215, in \
        _call_wrapper\n\
        \x20   ret = await asyncio.to_thread(fn, *args, **kwargs)\n";
    assert_eq!(phase(text), Phase::Inference);
    // A traceback's own last line followed by another rank's traceback keeps its own frames.
    let text = "  File \"/u/lib/python3.10/dist-packages/accelerate/accelerator.py\", line 1433, \
                in prepare_model\n\
        \x20   model = torch.nn.parallel.DistributedDataParallel(\n\
        \x20 File \"/u/lib/python3.10/dist-packages/torch/nn/parallel/distributed.py\", line 1100, \
        in _ddp_init_helper\n\
        \x20   self.reducer = dist.Reducer(\n\
        torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 25.10 GiB. \
                GPU 1 has a total capacity of 39.39 GiB of which 13.57 GiB is free.\n\
        Traceback (most recent call last):\n\
        \x20 File \"/u/lib/python3.10/dist-packages/transformers/trainer.py\", line 1555, in \
        train\n\
        \x20   return inner_training_loop(\n";
    assert_eq!(phase(text), Phase::Unknown);
}

#[test]
fn lmdeploys_quantization_command_is_a_conversion() {
    let text = "lmdeploy lite auto_awq Meta-Llama-3-70B-Instruct --work-dir ./out\n\
                RuntimeError: CUDA error: out of memory\n";
    assert_eq!(phase(text), Phase::FormatConversion);
    let text = "lmdeploy serve api_server ./model --server-port 23333\n\
                RuntimeError: CUDA error: out of memory\n";
    assert_ne!(phase(text), Phase::FormatConversion);
}
