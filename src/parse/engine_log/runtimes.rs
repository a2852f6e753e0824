//! Stage lines of inference runtimes and apps without a module of their own, read from their
//! sources (each handler names the project, file, function and version read): ONNX Runtime's
//! kernel and session errors, the TVM backtrace of MLC-LLM's weight loading, ultralytics'
//! per-image prediction lines, Aphrodite's loaded weights, Fooocus-API's failed task and infinity's
//! batch handler. They add timeline events or say which stage a failure is in;
//! which engine a text belongs to is decided elsewhere.

use super::common::{has, size_after};
use super::{rule, LineFacts, Rule};
use crate::model::explain::{EventFigures, EventKind, Phase};

pub(super) const RULES: &[Rule] = &[
    rule("Non-zero status code returned while running ", ort_kernel),
    rule("Exception during initialization", ort_initialization),
    rule("] Begin execution", ort_run_begins),
    rule("driver version is insufficient", insufficient_driver),
    rule("cudaErrorInsufficientDriver", insufficient_driver),
    // ONNX Runtime GenAI's KV cache (session 47).
    rule(
        "Could not allocate the key-value cache buffer",
        ort_genai_kv_cache,
    ),
    // The driver's context made at the first CUDA call (session 47).
    rule("cuDevicePrimaryCtxRetain", context_creation),
    // (OptiX 6's wrapper capitalises it: `cudaDriver().CuDevicePrimaryCtxRetain( &context, …)
    // returned (2): Out of memory`.)
    rule("CuDevicePrimaryCtxRetain", context_creation),
    rule("cuCtxCreate", context_creation),
    // The RAPIDS Accelerator's device memory set up as a Spark executor starts (session 47).
    rule("Rmm.initialize(", rmm_java_initialize),
    rule(".initializeRmm(", rmm_java_initialize),
    rule("NDArrayCache::Load", tvm_params_load),
    rule("video 1/", ultralytics_prediction),
    rule(" (frame ", ultralytics_prediction),
    rule("image 1/", ultralytics_prediction),
    rule("mAP50-95)", ultralytics_validation),
    // TensorRT-LLM's PyTorch back end loading modules on threads.
    rule("Error executing ", trtllm_concurrent_call),
    rule(
        "Model weights loaded. Memory usage:",
        aphrodite_weights_loaded,
    ),
    rule("Finish task with error", fooocus_api_task_failed),
    // faster-whisper's transcription of one input (session 39).
    rule("Processing audio with duration ", faster_whisper_transcribe),
    rule("[BlockManager] max_block_count = ", turbomind_blocks),
    rule("LlamaBatch<T>::Start()", turbomind_batch_started),
    // === Thirteenth session: LMDeploy TurboMind's KV-cache pool (handlers at the end of this
    // file). ===
    // Marked by the logger's name and level: the source location (`batch_handler.py:574`)
    // shares its bytes with every log line's `file.py:N`, which the scan must pass quickly.
    rule("infinity_emb ERROR", infinity_batch_error),
    // LM Studio's reply to a prediction whose stream raised (session 38).
    rule(
        "Error in iterating prediction stream",
        lmstudio_prediction_stream,
    ),
    // LightGBM's GPU tree learner building its OpenCL kernels at set-up (session 38).
    rule("Compiling OpenCL Kernel with ", lightgbm_kernel_build),
    // mmcv's progress bar (session 27).
    rule(" task/s, elapsed: ", mmcv_progress),
    // … and its first line, before any task is done (session 43).
    rule(", elapsed: 0s, ETA:", mmcv_progress),
];

/// mmcv's `ProgressBar` (`mmcv/utils/progressbar.py`, 1.x: `[>>>>>>    ] 3217/3849, 4.0 task/s,
/// elapsed: 799s, ETA: 157s`; `start` prints `[          ] 0/500, elapsed: 0s, ETA:` before the
/// first task), which OpenMMLab's `single_gpu_test` / `multi_gpu_test`
/// (`mmdet/apis/test.py`, `mmseg/apis/test.py`) draw over the evaluation set, from the
/// evaluation hook inside training or from `tools/test.py`: the model runs on the evaluation
/// images.
fn mmcv_progress(text: &str, facts: &mut LineFacts) {
    let counted = facts.events.iter().any(|e| e.kind == EventKind::Evaluation);
    if !counted && text.contains("] ") && text.contains('[') {
        facts.event(
            EventKind::Evaluation,
            Phase::Inference,
            EventFigures::default(),
        );
    }
}

/// Ultralytics' validation bar (`ultralytics/models/yolo/detect/val.py`
/// `DetectionValidator.get_desc`, 8.0 → 8.3: `Class  Images  Instances  Box(P  R  mAP50
/// mAP50-95)`, a `tqdm` bar under `BaseValidator.__call__`; segmentation adds `Mask(P …`): the
/// model runs on the validation images, after an epoch or under `yolo val`.
fn ultralytics_validation(text: &str, facts: &mut LineFacts) {
    let counted = facts.events.iter().any(|e| e.kind == EventKind::Evaluation);
    if !counted && has(text, "Instances") && has(text, "Box(P") && has(text, "mAP50") {
        facts.event(
            EventKind::Evaluation,
            Phase::Inference,
            EventFigures::default(),
        );
    }
}

/// TensorRT-LLM's PyTorch back end (`tensorrt_llm/_torch/models/modeling_utils.py`
/// `run_concurrently`, 0.21 → 1.x: `logger.error(f"Error executing {func.__name__} with args
/// {arg}: {str(e)}")`), which loads the model's modules on a thread pool (`load_weights` →
/// `load_single_module`): the function named is a frame of the failure, which the frame rules
/// read.
fn trtllm_concurrent_call(text: &str, facts: &mut LineFacts) {
    let Some((_, rest)) = text.split_once("Error executing ") else {
        return;
    };
    let name: String = rest
        .chars()
        .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
        .collect();
    if !name.is_empty() && rest[name.len()..].starts_with(" with args ") {
        facts.frame = Some((name, TRTLLM_CONCURRENT_CALL.to_string()));
    }
}

/// The file of a frame read from TensorRT-LLM's "Error executing X with args" line.
const TRTLLM_CONCURRENT_CALL: &str = "tensorrt_llm/_torch/models/modeling_utils.py";

/// infinity (michaelfeil/infinity, `libs/infinity_emb/infinity_emb/inference/batch_handler.py`,
/// 0.0.5x–0.0.7x): the batching engine's threads (`BatchHandler._publish_towards_model`,
/// `_subscribe_to_model`, `ModelWorker._preprocess_batch` / `_core_batch` (the forward pass,
/// `encode_core`) / `_postprocess_batch`) log what stops them with `logger.exception(ex)`; the
/// `infinity_emb` logger prints the source location (`infinity_emb ERROR: CUDA out of memory. …
/// batch_handler.py:574`). An error logged there happened while request batches were embedded.
fn infinity_batch_error(text: &str, facts: &mut LineFacts) {
    let logged = text
        .split_once("infinity_emb ERROR")
        .is_some_and(|(_, rest)| has(rest, "batch_handler.py:"));
    if logged {
        facts.failed_phase_hint = Some(Phase::Inference);
    }
}

/// ONNX Runtime 1.x `onnxruntime/core/framework/sequential_executor.cc` `ExecuteKernel`: a
/// kernel that failed while `InferenceSession::Run` executed the graph is reported as
/// `Non-zero status code returned while running <OpType> node. Name:'<node>' Status Message:
/// …` (the message the Python `InferenceSession.run` raises): the model is being run on inputs.
fn ort_kernel(text: &str, facts: &mut LineFacts) {
    let Some((_, rest)) = text.split_once("Non-zero status code returned while running ") else {
        return;
    };
    let op = rest.split_whitespace().next().unwrap_or("");
    let node = rest[op.len()..].trim_start().starts_with("node");
    if !op.is_empty() && node {
        facts.failed_phase_hint = Some(Phase::Inference);
    }
}

/// The CUDA runtime refusing a driver older than itself: `cudaErrorInsufficientDriver` (35,
/// `driver_types.h`: "CUDA driver version is insufficient for CUDA runtime version"), returned
/// by the first runtime call that initialises the driver (`cudaGetDeviceCount`, `cudaSetDevice`,
/// PyTorch's `THCudaInit` / lazy CUDA init, ONNX Runtime's CUDA provider): start-up, before any
/// model work.
fn insufficient_driver(text: &str, facts: &mut LineFacts) {
    if has(text, "CUDA driver version is insufficient") || has(text, "cudaErrorInsufficientDriver")
    {
        facts.failed_phase_hint = Some(Phase::Startup);
    }
}

/// ONNX Runtime GenAI (`src/models/kv_cache.cpp`, 0.4–0.9) allocating the generator's whole
/// key-value cache when `Generator` is made: `Could not allocate the key-value cache buffer of
/// shape: [batch_size (1), num_key_value_heads (8), max_length (27286), head_size (128)] for 28
/// layers. Try reducing the max_length requested or reducing the batch size.`: the KV cache's
/// allocation failed (on the device the model runs on: the host's for a CPU model).
fn ort_genai_kv_cache(text: &str, facts: &mut LineFacts) {
    if has(
        text,
        "Could not allocate the key-value cache buffer of shape",
    ) {
        facts.failed_phase_hint = Some(Phase::KvCacheAlloc);
    }
}

/// The driver API's context creation: `cuDevicePrimaryCtxRetain` (the primary context the CUDA
/// runtime, PyTorch, CuPy and CUDA.jl use: CUDA.jl `lib/cudadrv/context.jl` `CuContext(dev)`,
/// TensorFlow's `stream_executor/cuda/cuda_driver.cc` `failed call to cuDevicePrimaryCtxRetain:
/// CUDA_ERROR_OUT_OF_MEMORY`) and `cuCtxCreate` (older TensorFlow, PyCUDA's `make_context`), as
/// a frame or a failed call: the first CUDA call of the process makes the context (a few
/// hundred MiB of the device's memory), before any model work: start-up.
fn context_creation(text: &str, facts: &mut LineFacts) {
    let named = |name: &str| {
        // `cuCtxCreate`, `cuCtxCreate_v2`, `cuCtxCreate(`, not `cuCtxCreateFoo`.
        text.match_indices(name).any(|(at, _)| {
            !text[at + name.len()..]
                .chars()
                .next()
                .is_some_and(|c| c.is_ascii_alphanumeric())
        })
    };
    if named("cuDevicePrimaryCtxRetain")
        || named("CuDevicePrimaryCtxRetain")
        || named("cuCtxCreate")
    {
        facts.failed_phase_hint = Some(Phase::Startup);
    }
}

/// The RAPIDS Accelerator for Apache Spark setting up the executor's device memory
/// (spark-rapids `GpuDeviceManager.scala` `initializeMemory` → `initializeRmm` → cuDF's Java
/// `ai.rapids.cudf.Rmm.initialize`, which builds the pool or async memory resource): a Java
/// frame (`at ai.rapids.cudf.Rmm.initialize(Rmm.java:247)`) under the failure places it at the
/// executor's start, before any task.
fn rmm_java_initialize(text: &str, facts: &mut LineFacts) {
    let frame = text.trim_start().starts_with("at ");
    if frame && (has(text, "ai.rapids.cudf.Rmm.initialize(") || has(text, "$.initializeRmm(")) {
        facts.failed_phase_hint = Some(Phase::Startup);
    }
}

/// ONNX Runtime 1.x `onnxruntime/core/framework/sequential_executor.cc` (`ExecuteThePlan`:
/// `LOGS(logger, VERBOSE) << "Begin execution"`), printed at the verbose level when
/// `InferenceSession::Run` starts executing the graph on a request's inputs: `[I:onnxruntime:,
/// sequential_executor.cc:155 Execute] Begin execution`.
fn ort_run_begins(text: &str, facts: &mut LineFacts) {
    if has(text, "sequential_executor.cc") || has(text, "onnxruntime") {
        facts.event(
            EventKind::Request,
            Phase::Inference,
            EventFigures::default(),
        );
    }
}

/// ONNX Runtime 1.x `onnxruntime/core/session/inference_session.cc`
/// `InferenceSession::Initialize`: an exception while the session partitions the graph onto its
/// execution providers, creates their kernels and places the initializers on the device is
/// reported as `Exception during initialization: …` (logged from `inference_session.cc`, raised
/// by the Python `InferenceSession.__init__` → `_create_inference_session`): the model is
/// being loaded onto the device.
fn ort_initialization(text: &str, facts: &mut LineFacts) {
    // (The status's head alone on its line when a console wraps it: `RUNTIME_EXCEPTION :
    // Exception during initialization: ` and the arena's path on the next line,
    // huggingface/optimum#1069.)
    if has(text, "Exception during initialization:")
        && (has(text, "onnxruntime")
            || has(text, "inference_session.cc")
            || has(text, "[ONNXRuntimeError]"))
    {
        facts.failed_phase_hint = Some(Phase::WeightsLoad);
    }
}

/// MLC-LLM (`cpp/serve/model.cc` `ModelImpl::LoadParams`, 0.1x) loads the weights' shards
/// through TVM's `relax_vm::NDArrayCache::Load` (`src/runtime/relax_vm/ndarray_cache_support.cc`,
/// which copies each shard's arrays to the device); a failure there prints TVM's backtrace
/// with that frame (`  1: tvm::runtime::relax_vm::NDArrayCache::Load(…)`): the weights are
/// being loaded.
fn tvm_params_load(text: &str, facts: &mut LineFacts) {
    let frame = text
        .trim_start()
        .split_once(": ")
        .is_some_and(|(number, symbol)| {
            !number.is_empty()
                && number.bytes().all(|b| b.is_ascii_digit())
                && symbol.starts_with("tvm::runtime::relax_vm::NDArrayCache::Load")
        });
    if frame {
        facts.failed_phase_hint = Some(Phase::WeightsLoad);
    }
}

/// ultralytics 8.x `engine/predictor.py` `BasePredictor.stream_inference` → `write_results`
/// logs one line per image or video frame it ran the model on: the source's description from
/// `data/loaders.py` `LoadImagesAndVideos.__next__` (`image 1/3 /data/bus.jpg: `, `video 1/1
/// (frame 12/2647) /data/clip.mp4: `; 8.0: `video 1/1 (12/2647) …`), the input's size and the
/// detections, then the model's time (`640x384 1 person, 2 cars, 9.6ms`). `predict` and
/// `track` run the model on each: the model is running on inputs.
fn ultralytics_prediction(text: &str, facts: &mut LineFacts) {
    let line = text.trim();
    let start = ["video ", "image "]
        .iter()
        .filter_map(|word| line.find(word).map(|at| &line[at + word.len()..]))
        .next();
    let Some(rest) = start else {
        return;
    };
    let counted = |part: &str| {
        part.split_once('/').is_some_and(|(done, total)| {
            !done.is_empty()
                && !total.is_empty()
                && done.bytes().all(|b| b.is_ascii_digit())
                && total.bytes().all(|b| b.is_ascii_digit())
        })
    };
    let Some((index, rest)) = rest.split_once(' ') else {
        return;
    };
    let frame_ok = match rest.strip_prefix('(') {
        Some(inner) => inner
            .split_once(')')
            .is_some_and(|(frame, _)| counted(frame.strip_prefix("frame ").unwrap_or(frame))),
        None => true,
    };
    // The model's time closes the line: `…, 9.6ms`.
    let timed = line.strip_suffix("ms").is_some_and(|head| {
        let number = head.rsplit([' ', ',']).next().unwrap_or("");
        !number.is_empty() && number.parse::<f64>().is_ok()
    });
    let sized = line.split_whitespace().any(|word| {
        word.split_once('x').is_some_and(|(w, h)| {
            !w.is_empty()
                && !h.is_empty()
                && w.bytes().all(|b| b.is_ascii_digit())
                && h.bytes().all(|b| b.is_ascii_digit())
        })
    });
    if counted(index) && frame_ok && timed && sized && line.contains(": ") {
        facts.event(
            EventKind::Request,
            Phase::Inference,
            EventFigures::default(),
        );
    }
}

/// Aphrodite engine 0.5.x `aphrodite/task_handler/model_runner.py` `ModelRunner.load_model`:
/// `Model weights loaded. Memory usage: 17.15 GiB x 4 = 68.60 GiB` once the weights are on the
/// GPU (per worker, then the tensor-parallel total; `get_model` has run the quantization's
/// post-processing by then). The engine's constructor (`aphrodite/engine/aphrodite_engine.py`
/// `AphroditeEngine.__init__`: `_init_workers` runs `load_model` on every worker, then
/// `_init_cache` runs `profile_num_available_blocks`, the profiling pass) profiles the memory to
/// size its KV cache next: the profiling starts, until `# GPU blocks: …` (its result, logged
/// before the cache is allocated) or a later stage shows.
fn aphrodite_weights_loaded(text: &str, facts: &mut LineFacts) {
    let bytes = size_after(text, "Memory usage:", true);
    if bytes.is_some() {
        facts.memory.weights = bytes;
        facts.event(
            EventKind::WeightsLoaded,
            Phase::WeightsLoad,
            EventFigures {
                bytes,
                ..EventFigures::default()
            },
        );
        facts.event(
            EventKind::ProfilingStart,
            Phase::Profiling,
            EventFigures::default(),
        );
    }
}

/// Fooocus-API (`fooocusapi/worker.py` `process_generate`, 0.4) runs each queued job (text to
/// image, image prompt, upscale or vary, inpaint) and reports a failure as `[Task Queue] Finish
/// task with error: <error>`: an image was being generated.
fn fooocus_api_task_failed(text: &str, facts: &mut LineFacts) {
    if has(text, "[Task Queue] Finish task with error") {
        facts.failed_phase_hint = Some(Phase::Inference);
    }
}

/// LMDeploy TurboMind (`src/turbomind/models/llama/BlockManager.cc` `BlockManager::BlockManager`,
/// 0.1–0.6): `[TM][INFO] [BlockManager] max_block_count = 159` is logged when the KV-cache pool is
/// sized, right before its first chunk (by default the whole pool) is allocated (`Malloc()`).
fn turbomind_blocks(text: &str, facts: &mut LineFacts) {
    let count = text
        .split("max_block_count = ")
        .nth(1)
        .map(|rest| rest.trim().bytes().take_while(u8::is_ascii_digit).count())
        .unwrap_or(0);
    if count > 0 {
        facts.event(
            EventKind::KvCachePlanned,
            Phase::KvCacheAlloc,
            EventFigures::default(),
        );
    }
}

/// TurboMind's batch loop started (`src/turbomind/models/llama/LlamaBatch.cc`
/// `LlamaBatch<T>::Start`, logged as `[TM][INFO] LlamaBatch<T>::Start()`): the batch, its KV
/// cache included, was created before it.
fn turbomind_batch_started(text: &str, facts: &mut LineFacts) {
    if text.contains("[TM]") {
        facts.event(
            EventKind::KvCacheAllocated,
            Phase::KvCacheAlloc,
            EventFigures::default(),
        );
    }
}

#[cfg(test)]
mod session13_tests {
    use super::super::event_kinds as kinds;
    use crate::model::explain::{EventKind, Phase};

    #[test]
    fn turbomind_pool_lines() {
        assert_eq!(
            kinds("[TM][INFO] [BlockManager] max_block_count = 159"),
            vec![EventKind::KvCachePlanned]
        );
        assert_eq!(
            kinds("[TM][INFO] LlamaBatch<T>::Start()"),
            vec![EventKind::KvCacheAllocated]
        );
        assert!(kinds("[BlockManager] max_block_count = unknown").is_empty());
    }

    /// ONNX Runtime's verbose `Begin execution`: a run of the graph on inputs; the words alone
    /// in another program's line are not.
    #[test]
    fn onnx_runtime_begin_execution_is_a_run() {
        assert_eq!(
            kinds(
                "2022-01-07 07:17:51.915355558 [I:onnxruntime:, sequential_executor.cc:155 \
                 Execute] Begin execution"
            ),
            vec![EventKind::Request]
        );
        assert!(kinds("[worker] Begin execution of the batch job").is_empty());
    }

    /// A driver older than the CUDA runtime fails the first CUDA call: start-up.
    #[test]
    fn an_insufficient_driver_fails_at_start_up() {
        for line in [
            "RuntimeError: cuda runtime error (35) : CUDA driver version is insufficient for CUDA \
             runtime version at /pytorch/aten/src/THC/THCGeneral.cpp:70",
            "CUDA error at bandwidthTest.cu:255 code=35(cudaErrorInsufficientDriver) \
             \"cudaSetDevice(currentDevice)\"",
        ] {
            let facts = super::super::parse_line_scan(line);
            assert_eq!(facts.failed_phase_hint, Some(Phase::Startup), "{line}");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::{event_kinds, parse_line_scan};
    use crate::model::explain::{EventKind, Phase};

    #[test]
    fn onnx_runtime_names_the_run_or_the_session_set_up() {
        let kernel = "[E:onnxruntime:, sequential_executor.cc:514 ExecuteKernel] Non-zero status \
                      code returned while running ReduceSum node. Name:'ReduceSum_12' Status \
                      Message: Failed to allocate memory for requested buffer of size 939524096";
        assert_eq!(
            parse_line_scan(kernel).failed_phase_hint,
            Some(Phase::Inference)
        );
        let init = "Exception during initialization: /onnxruntime/core/providers/cuda/\
                    cuda_call.cc:121 CUDA failure 2: out of memory";
        assert_eq!(
            parse_line_scan(init).failed_phase_hint,
            Some(Phase::WeightsLoad)
        );
        // Other programs' words are not ONNX Runtime's.
        assert_eq!(
            parse_line_scan("Exception during initialization: plugin foo").failed_phase_hint,
            None
        );
        assert_eq!(
            parse_line_scan("Non-zero status code returned while running the job")
                .failed_phase_hint,
            None
        );
    }

    #[test]
    fn a_tvm_backtrace_frame_of_the_weights_cache_is_a_load() {
        let frame = "  1: tvm::runtime::relax_vm::NDArrayCache::Load(std::__cxx11::basic_string<\
                     char> const&, int, int)";
        assert_eq!(
            parse_line_scan(frame).failed_phase_hint,
            Some(Phase::WeightsLoad)
        );
        let prose = "it fails in NDArrayCache::Load, I think";
        assert_eq!(parse_line_scan(prose).failed_phase_hint, None);
    }

    #[test]
    fn ultralytics_prediction_lines_are_inference() {
        for line in [
            "video 1/1 (1/2647) /tmp/clip.MOV: 640x384 1 circle, 2 mask3, 19.7ms",
            "video 1/2 (frame 12/300) /data/a.mp4: 384x640 3 persons, 9.6ms",
            "image 1/3 /data/bus.jpg: 640x480 4 persons, 1 bus, 12.3ms",
            "video 1/1 (frame 5/90) /data/b.mp4: 384x640 (no detections), 8.1ms",
        ] {
            assert_eq!(event_kinds(line), vec![EventKind::Request], "{line}");
        }
        for line in [
            "image 1/3 of the dataset looks wrong",
            "video 1/1 (1/2647) /tmp/clip.MOV: loading",
            "Upload image 1/2: done in 12ms",
        ] {
            assert!(!event_kinds(line).contains(&EventKind::Request), "{line}");
        }
    }

    #[test]
    fn ultralytics_validation_bar_is_inference() {
        let line =
            "                 Class     Images  Instances      Box(P          R      mAP50  \
                    mAP50-95):   0%|          | 0/21 [03:11<?, ?it/s]";
        assert_eq!(event_kinds(line), vec![EventKind::Evaluation]);
        assert!(event_kinds("mAP50-95) of our model is 0.52").is_empty());
    }

    #[test]
    fn trtllms_concurrent_load_names_its_function() {
        let facts = parse_line_scan(
            "[09/17/2025-21:24:19] [TRT-LLM] [RANK 2] [E] Error executing load_single_module \
             with args ('model.layers.9.mlp.gate_up_proj', Linear()): CUDA out of memory.",
        );
        assert_eq!(
            facts.frame.map(|(name, _)| name).as_deref(),
            Some("load_single_module")
        );
        assert_eq!(
            parse_line_scan("Error executing method 'load_model'").frame,
            Some(("load_model".to_string(), "<worker method>".to_string()))
        );
    }

    #[test]
    fn an_error_logged_by_infinitys_batch_handler_is_inference() {
        let line = "ERROR    2025-01-02 10:11:12,345 infinity_emb ERROR: CUDA out of memory.   \
                    batch_handler.py:420";
        assert_eq!(
            parse_line_scan(line).failed_phase_hint,
            Some(Phase::Inference)
        );
        let other = "INFO     2025-01-02 10:11:12,345 infinity_emb INFO: ready to batch requests. \
                     batch_handler.py:312";
        assert_eq!(parse_line_scan(other).failed_phase_hint, None);
        assert_eq!(
            parse_line_scan("ERROR: my_app batch_handler.py:10 failed").failed_phase_hint,
            None
        );
    }

    #[test]
    fn aphrodite_loaded_weights_and_fooocus_api_task() {
        let loaded = "INFO:     Model weights loaded. Memory usage: 17.15 GiB x 4 = 68.60 GiB";
        // Loaded, and the profiling pass that sizes the KV cache is what runs next.
        assert_eq!(
            event_kinds(loaded),
            vec![EventKind::WeightsLoaded, EventKind::ProfilingStart]
        );
        let task = "ERROR    [Task Queue] Finish task with error: CUDA out of memory.";
        assert_eq!(
            parse_line_scan(task).failed_phase_hint,
            Some(Phase::Inference)
        );
    }

    /// Stage lines of other modules read this session: vLLM's multi-modal profile run,
    /// Lightning 1.x's evaluation bars, llama.cpp's model loader and koboldcpp's token loop.
    #[test]
    fn stage_lines_of_vllm_lightning_llama_cpp_and_koboldcpp() {
        for line in [
            "INFO 09-27 11:18:35 enc_dec_model_runner.py:297] Starting profile run for \
             multi-modal models.",
            "INFO 10-18 09:53:21 [gpu_model_runner.py:3344] Encoder cache will be initialized \
             with a budget of 8192 tokens, and profiled with 1 image items of the maximum \
             feature size.",
        ] {
            assert_eq!(event_kinds(line), vec![EventKind::ProfilingStart], "{line}");
        }
        assert!(event_kinds("the maximum feature size is 1024").is_empty());
        let bar = "Validating:  15%|██▎        | 513/3434 [2:04:33<16:18:51, 20.11s/it]";
        assert_eq!(event_kinds(bar), vec![EventKind::Evaluation]);
        for line in [
            "llama_model_loader: - kv  26:   tokenizer.ggml.eos_token_id u32 = 128009",
            "llama_model_loader: - type  f32:   66 tensors",
            "llm_load_print_meta: n_layer          = 32",
            "print_info: n_layer          = 32",
        ] {
            assert_eq!(
                event_kinds(line),
                vec![EventKind::WeightsLoadProgress],
                "{line}"
            );
        }
        assert!(event_kinds("print_info: done").is_empty());
        assert_eq!(
            event_kinds("Generating (12 / 512 tokens)"),
            vec![EventKind::Request]
        );
        assert!(event_kinds("Generating (please wait)").is_empty());
    }
}

/// LM Studio (0.3.x) reports an error raised while it streamed a prediction's tokens as `Error
/// in iterating prediction stream: RuntimeError: [metal::malloc] …` (the app's chat and its
/// OpenAI-compatible server both relay it, as users' reports of MLX and llama.cpp back ends
/// show): the model was loaded and a request's prompt or tokens were being computed, i.e.
/// inference. (A failed load is reported as `Failed to load model`, not this.)
fn lmstudio_prediction_stream(_text: &str, facts: &mut LineFacts) {
    facts.failed_phase_hint = Some(Phase::Inference);
}

/// LightGBM's GPU tree learner (`src/treelearner/gpu_tree_learner.cpp`
/// `GPUTreeLearner::BuildGPUKernels`, 2.x–4.x: `Log::Info("Compiling OpenCL Kernel with %d
/// bins...", device_bin_size_)`), called from `InitGPU` when the booster is created, before
/// any boosting round: the OpenCL programs for the histogram kernels are being built, a
/// start-up step of the training job. (A later line, a step or a failure past it, shows more.)
fn lightgbm_kernel_build(text: &str, facts: &mut LineFacts) {
    if has(text, " bins") {
        facts.event(
            EventKind::DeviceInit,
            Phase::Startup,
            EventFigures::default(),
        );
    }
}

/// faster-whisper (SYSTRAN/faster-whisper, `faster_whisper/transcribe.py`, 0.x–1.x):
/// `WhisperModel.transcribe` and `BatchedInferencePipeline.transcribe` log `self.logger.info(
/// "Processing audio with duration %s", format_timestamp(duration))` once the input audio is
/// decoded, before its features are extracted and its segments decoded; apps built on it
/// (whisperX, Subtitle Edit's Purfview build, speech-to-text front ends) print it through the
/// `faster_whisper` logger: `INFO:faster_whisper:Processing audio with duration 00:02.368`. The
/// model was loaded and is applied to the user's audio (session 39).
fn faster_whisper_transcribe(text: &str, facts: &mut LineFacts) {
    let rest = text
        .split_once("Processing audio with duration ")
        .map_or("", |(_, rest)| rest);
    if rest.starts_with(|c: char| c.is_ascii_digit()) {
        facts.event(
            EventKind::Request,
            Phase::Inference,
            EventFigures::default(),
        );
    }
}
