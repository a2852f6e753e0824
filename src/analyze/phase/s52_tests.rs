//! Session 52: the stages the first reading of the session's blind batches missed (mistral.rs's
//! engine loop in a Rust backtrace, TensorRT-LLM's batch manager and Python session, ONNX
//! Runtime's session set-up wrapped by a console, AlphaFold's prediction, a nearest-neighbour
//! search announced, and a CUDA extension's error head between a bar and its error).

use super::s42_tests::MESSAGE;
use crate::analyze::explain::explain_text;
use crate::model::explain::Phase;

fn phase(text: &str) -> Phase {
    explain_text(text).phase.failed_in
}

#[test]
fn mistral_rs_engine_loop_in_a_rust_backtrace_is_serving() {
    let text =
        "called `Result::unwrap()` on an `Err` value: DriverError(CUDA_ERROR_OUT_OF_MEMORY, \
                \"out of memory\")\nstack backtrace:\n   0: rust_begin_unwind\n   1: \
                core::result::unwrap_failed\n   2: \
                mistralrs_core::models::llama::Llama::forward\n   3: \
                <mistralrs_core::pipeline::normal::NormalPipeline as \
                mistralrs_core::pipeline::Pipeline>::forward_inputs\n   4: \
                mistralrs_core::pipeline::Pipeline::step::{{closure}}\n   5: \
                mistralrs_core::engine::Engine::run::{{closure}}\n   6: \
                tokio::runtime::park::CachedParkThread::block_on\n";
    assert_eq!(phase(text), Phase::Inference);
    // A closure alone names no function of a rule.
    let closure_only = "called `Result::unwrap()` on an `Err` value: \
                        DriverError(CUDA_ERROR_OUT_OF_MEMORY, \"out of memory\")\nstack \
                        backtrace:\n   0: rust_begin_unwind\n   1: \
                        tokio::runtime::park::CachedParkThread::block_on::{{closure}}\n";
    assert_eq!(phase(closure_only), Phase::Unknown);
}

#[test]
fn tensorrt_llms_batch_manager_step_and_python_session_name_their_stage() {
    let cpp = "[TensorRT-LLM][ERROR] Encountered an error in forwardAsync function: \
               [TensorRT-LLM][ERROR] CUDA runtime error in ::cudaMallocAsync(ptr, n, \
               mMemPool->getPool(), mCudaStream->get()): out of memory \
               (/src/tensorrt_llm/runtime/tllmBuffers.h:125)\n1       0x7f1ddb698e13 void \
               tensorrt_llm::common::check<cudaError>(cudaError, char const*, char const*, int) \
               + 147\n2       0x7f1ddd3d9e43 \
               tensorrt_llm::runtime::BufferManager::gpu(nvinfer1::Dims64, \
               nvinfer1::DataType) const + 515\n3       0x7f1ddd8c1618 \
               tensorrt_llm::batch_manager::RuntimeBuffers::prepareStep[abi:cxx11](std::vector<\
               int>) + 1212\n";
    assert_eq!(phase(cpp), Phase::Inference);
    let python = "Traceback (most recent call last):\n  File \"/code/examples/whisper/run.py\", \
                  line 153, in get_session\n    session = \
                  tensorrt_llm.runtime.GenerationSession(\n  File \
                  \"/usr/lib/python3/dist-packages/tensorrt_llm/runtime/generation.py\", line \
                  150, in __init__\n    self.__prepare(mapping, engine_buffer)\n  File \
                  \"/usr/lib/python3/dist-packages/tensorrt_llm/runtime/generation.py\", line \
                  170, in __prepare\n    address = \
                  CUASSERT(cudart.cudaMalloc(self.engine.device_memory_size))[0]\nRuntimeError: \
                  CUDA ERROR: 2, error code reference: \
                  https://nvidia.github.io/cuda-python/module/cudart.html\n";
    assert_eq!(phase(python), Phase::WeightsLoad);
}

#[test]
fn onnx_runtimes_session_set_up_is_the_load_when_a_console_wraps_it() {
    let text = "RuntimeException: [ONNXRuntimeError] : 6 : RUNTIME_EXCEPTION : Exception during \
                initialization: \n/onnxruntime_src/onnxruntime/core/framework/bfc_arena.cc:368 \
                void* \nonnxruntime::BFCArena::AllocateRawInternal(size_t, bool) Failed to \
                allocate memory for requested buffer of size 180355072\n";
    assert_eq!(phase(text), Phase::WeightsLoad);
}

#[test]
fn alphafolds_prediction_and_parameters_name_their_stage() {
    let predict = format!(
        "Traceback (most recent call last):\n  File \"/app/alphafold/run_alphafold.py\", line \
         445, in <module>\n    app.run(main)\n  File \"/app/alphafold/run_alphafold.py\", line \
         421, in main\n    predict_structure(\n  File \"/app/alphafold/run_alphafold.py\", line \
         199, in predict_structure\n    prediction_result = model_runner.predict(x)\n  File \
         \"/app/alphafold/alphafold/model/model.py\", line 167, in predict\n    result = \
         self.apply(self.params, jax.random.PRNGKey(random_seed), feat)\n{MESSAGE}"
    );
    assert_eq!(phase(&predict), Phase::Inference);
    let params = format!(
        "Traceback (most recent call last):\n  File \"/app/worker.py\", line 20, in __init__\n    \
         params = data.get_model_haiku_params(model_name=name, data_dir=d)\n  File \
         \"/app/alphafold/model/data.py\", line 37, in get_model_haiku_params\n    return \
         utils.flat_params_to_haiku(params)\n{MESSAGE}"
    );
    assert_eq!(phase(&params), Phase::WeightsLoad);
}

#[test]
fn a_nearest_neighbour_search_announced_is_inference() {
    let text = format!(
        "[2023-09-12 10:01:02,334][utils.faiss_mat][INFO] - Loading features.\n\
         [2023-09-12 10:01:09,114][utils.faiss_mat][INFO] - Finding nearest neighbors.\n{MESSAGE}"
    );
    assert_eq!(phase(&text), Phase::Inference);
}

#[test]
fn a_cuda_extensions_error_head_stands_between_the_bar_and_its_error() {
    let text = "Training progress:   0%|          | 0/30000 [00:00<?, ?it/s]\n[CUDA ERROR] in \
                cuda_rasterizer/rasterizer_impl.cu\nLine 336: an illegal memory access was \
                encountered\n";
    assert_eq!(phase(text), Phase::TrainingStep);
}

#[test]
fn the_reporters_words_of_this_session_name_their_stage() {
    use super::s42_tests::phase_of;
    assert_eq!(
        phase_of("out of memory issues when instantiating TimeMoeForPrediction"),
        Phase::WeightsLoad
    );
    assert_eq!(
        phase_of("getting OOM when Initializing Ref Model"),
        Phase::WeightsLoad
    );
    assert_eq!(phase_of("It happens during VAE encode"), Phase::Inference);
    assert_eq!(
        phase_of("Conv2conv out of memory at validation time"),
        Phase::Inference
    );
    // A general case stays one (`for example`).
    assert_eq!(
        phase_of("Happens for example during VAE encode"),
        Phase::Unknown
    );
}

#[test]
fn a_quantizers_bar_and_tgis_graph_warm_up_name_their_stage() {
    let bar = format!("Running AWQ...:  19%|██        | 6/32 [01:02<04:30, 10.4s/it]\n{MESSAGE}");
    assert_eq!(phase(&bar), Phase::FormatConversion);
    let tgi = "2024-04-02T17:31:23.524470Z ERROR text_generation_launcher: Decode cuda graph \
               warmup failed\nTraceback (most recent call last):\n  File \
               \"/opt/conda/lib/python3.10/site-packages/text_generation_server/models/\
               flash_causal_lm.py\", line 822, in warmup\n    self.cuda_graph_warmup(bs, \
               max_s, max_bt)\ntorch.cuda.OutOfMemoryError: CUDA out of memory. Tried to \
               allocate 20.00 MiB\n";
    assert_eq!(phase(tgi), Phase::CudaGraphCapture);
}

#[test]
fn a_format_named_after_a_program_and_a_bare_pipeline_name_no_engine() {
    use crate::model::failure::EngineName;
    let format = format!(
        "I converted the annotations from the original YOLOv5 format to COCO format.\n\n{MESSAGE}"
    );
    assert_ne!(explain_text(&format).engine.name, EngineName::Ultralytics);
    let pyannote = format!(
        "pipeline = Pipeline.from_pretrained(\"pyannote/speaker-diarization@2022.07\")\n\
         {MESSAGE}"
    );
    assert_ne!(explain_text(&pyannote).engine.name, EngineName::Diffusers);
    let diffusers = format!(
        "pipe = StableDiffusionXLPipeline.from_pretrained(\"stabilityai/sdxl\")\n{MESSAGE}"
    );
    assert_eq!(explain_text(&diffusers).engine.name, EngineName::Diffusers);
}

#[test]
fn real_esrgans_per_image_line_is_inference() {
    let text = format!("Testing 0 Kermit_T_Soviet_Guard\n{MESSAGE}");
    assert_eq!(phase(&text), Phase::Inference);
    // A count of tests is no input being run.
    let tests = format!("testing sanity checks on 4 files\n{MESSAGE}");
    assert_eq!(phase(&tests), Phase::Unknown);
}
