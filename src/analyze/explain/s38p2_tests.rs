//! Whole-text checks of session 38's (p2) rules: LoRAX by its own names over TGI's sentences,
//! TGI's KV-cache manager inside its warm-up, MLX generation frames, LM Studio's prediction
//! stream, vLLM's dead engine loop answering a request, MXNet's `Speedometer`, a progress log
//! under a reporter's sentence naming the error, LightGBM's kernel build.

use super::whole_text::{engine, phase};
use crate::model::explain::Phase;
use crate::model::failure::EngineName;

const TORCH_OOM_320: &str = "torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate \
320.00 MiB. GPU 0 has a total capacity of 39.39 GiB of which 197.62 MiB is free.\n";

fn warmup(server: &str, launcher: &str) -> String {
    format!(
        "2024-03-19T09:54:39.063000Z ERROR {launcher}: interceptor.py:41 Method Warmup \
         encountered an error.\nTraceback (most recent call last):\n  \
         File \"/opt/conda/lib/python3.10/site-packages/{server}/models/flash_causal_lm.py\", \
         line 775, in warmup\n    cache_manager = set_cache_manager(\n  \
         File \"/opt/conda/lib/python3.10/site-packages/{server}/models/cache_manager.py\", \
         line 124, in set_cache_manager\n    CACHE_MANAGER = CacheManager(\n  \
         File \"/opt/conda/lib/python3.10/site-packages/{server}/models/cache_manager.py\", \
         line 29, in __init__\n    self.kv_cache = [\n{TORCH_OOM_320}"
    )
}

#[test]
fn loraxs_own_names_outrank_tgis_sentences() {
    let lorax = warmup("lorax_server", "lorax_launcher");
    assert_eq!(engine(&lorax), EngineName::Other);
    let router = "2024-03-20T07:57:45.050465Z ERROR warmup{max_input_length=1024}:warmup: \
        lorax_client: router/client/src/lib.rs:34: Server error: Not enough memory to handle \
        1024 prefill tokens. You need to decrease `--max-batch-prefill-tokens`\n\
        2024-03-20T07:57:45.117908Z ERROR lorax_launcher: Webserver Crashed\n";
    assert_eq!(engine(router), EngineName::Other);
    // TGI's own lines stay TGI's, and a name that only ends in the word is not LoRAX's.
    let tgi = warmup("text_generation_server", "text_generation_launcher");
    assert_eq!(engine(&tgi), EngineName::Tgi);
    let other = warmup("text_generation_server", "my_lorax_launcher");
    assert_eq!(engine(&other), EngineName::Tgi);
}

#[test]
fn tgis_cache_manager_inside_its_warmup_is_the_kv_cache() {
    assert_eq!(
        phase(&warmup(
            "text_generation_server",
            "text_generation_launcher"
        )),
        Phase::KvCacheAlloc
    );
    assert_eq!(
        phase(&warmup("lorax_server", "lorax_launcher")),
        Phase::KvCacheAlloc
    );
    // The warm-up's own forward (no cache manager below it) stays its profiling pass.
    let forward = "2024-03-19T09:54:39.063000Z ERROR text_generation_launcher: Method Warmup \
        encountered an error.\nTraceback (most recent call last):\n  \
        File \"/x/text_generation_server/models/flash_causal_lm.py\", line 775, in warmup\n    \
        _, batch, _ = self.generate_token(batch)\n  \
        File \"/x/text_generation_server/models/flash_causal_lm.py\", line 900, in \
        generate_token\n    out = self.forward(batch)\n";
    assert_eq!(
        phase(&format!("{forward}{TORCH_OOM_320}")),
        Phase::Profiling
    );
}

const METAL: &str = "RuntimeError: [metal::malloc] Attempting to allocate 48736917632 bytes \
which is greater than the maximum allowed buffer size of 30150672384 bytes.\n";

#[test]
fn mlx_generation_frames_are_inference() {
    let engine_dir = "/Users/u/.lmstudio/extensions/backends/vendor/app-mlx-generate/lib/\
        python3.11/site-packages/mlx_engine/model_kit/batched_vision/batch_generator.py";
    let lmstudio = format!(
        "Traceback (most recent call last):\n  File \"{engine_dir}\", line 1176, in _next\n    \
         self._prompt_batch.prompt_step()\n  File \"{engine_dir}\", line 825, in prompt_step\n    \
         mx.eval([c.state for c in self.prompt_cache])\n{METAL}"
    );
    assert_eq!(phase(&lmstudio), Phase::Inference);
    let vlm = format!(
        "Traceback (most recent call last):\n  File \"/x/site-packages/mlx_vlm/generate.py\", \
         line 400, in stream_generate\n    for n, (token, logprobs) in enumerate(gen):\n{METAL}"
    );
    assert_eq!(phase(&vlm), Phase::Inference);
    // The same function names in another program's files decide nothing.
    let other = format!(
        "Traceback (most recent call last):\n  File \"/x/mydata/batch_generator.py\", line 10, \
         in _next\n    return self.load()\n  File \"/x/mydata/loader.py\", line 5, in \
         prompt_step\n    x = read()\n{METAL}"
    );
    assert_eq!(phase(&other), Phase::Unknown);
}

#[test]
fn lm_studios_prediction_stream_error_is_inference() {
    let text = "Error in iterating prediction stream: RuntimeError: [metal::malloc] Resource \
        limit (499000) exceeded.\n";
    assert_eq!(phase(text), Phase::Inference);
    // The metal error alone shows no stage.
    let bare = "RuntimeError: [metal::malloc] Resource limit (499000) exceeded.\n";
    assert_eq!(phase(bare), Phase::Unknown);
}

#[test]
fn vllms_dead_engine_loop_answering_a_request_is_inference() {
    let text = "Engine loop is not running. Inspect the stacktrace to find the original error: \
        OutOfMemoryError('HIP out of memory. Tried to allocate 1.63 GiB. GPU 0 has a total \
        capacity of 63.98 GiB of which 1.18 GiB is free.')\n\nRetry attempt 1\n";
    assert_eq!(phase(text), Phase::Inference);
    assert_eq!(engine(text), EngineName::Vllm);
    // The loop's other wording, without the original error, is left to what surrounds it.
    let health = "Engine loop is not running\nHIP out of memory. Tried to allocate 1.63 GiB.\n";
    assert_eq!(phase(health), Phase::Unknown);
}

#[test]
fn mxnets_speedometer_lines_are_training_steps() {
    let log = "INFO:root:Epoch[0] Batch [2240] Speed: 0.27 samples/sec Train-RCNNAcc=0.794818, \
        RCNNLogLoss=0.640508,\nINFO:root:Epoch[0] Batch [2260] Speed: 0.34 samples/sec \
        Train-RCNNAcc=0.795092, RCNNLogLoss=0.639085,\n\
        terminate called after throwing an instance of 'dmlc::Error'\n  what():  [10:44:35] \
        src/storage/./pooled_storage_manager.h:107: cudaMalloc failed: out of memory\n";
    assert_eq!(phase(log), Phase::TrainingStep);
    let ranged = log.replace("Batch [2260]", "Batch [2240-2260]");
    assert_eq!(phase(&ranged), Phase::TrainingStep);
    // An epoch's validation line, or a batch counter without the callback's speed, is no step.
    let validation = "INFO:root:Epoch[0] Validation-accuracy=0.91\n\
        terminate called after throwing an instance of 'dmlc::Error'\n  what():  \
        cudaMalloc failed: out of memory\n";
    assert_ne!(phase(validation), Phase::TrainingStep);
    let counter = "Epoch[0] Batch [20] done\n\
        terminate called after throwing an instance of 'dmlc::Error'\n  what():  \
        cudaMalloc failed: out of memory\n";
    assert_ne!(phase(counter), Phase::TrainingStep);
}

const C10_ABORT: &str = "terminate called after throwing an instance of 'c10::Error'\n  \
what():  CUDA error: out of memory\nCUDA kernel errors might be asynchronously reported at some \
other API call, so the stacktrace below might be incorrect.\n";

#[test]
fn a_log_under_a_sentence_naming_the_error_keeps_its_progress() {
    let steps = "ep 1 train, step 97, acc 0.004, loss 8.624, 0.855 sec/step\n\
        ep 1 train, step 98, acc 0.007, loss 9.071, 0.797 sec/step\n";
    let text = format!(
        "I get the same problem also with Gloo backend, i.e. also CUDA OOM, although then it \
         crashes in a different way with an abort.\n```\n{steps}{C10_ABORT}"
    );
    assert_eq!(phase(&text), Phase::TrainingStep);
    // Without the log's steps, the sentence shows no stage.
    let bare = format!(
        "I get the same problem also with Gloo backend, i.e. also CUDA OOM, although then it \
         crashes in a different way with an abort.\n```\n{C10_ABORT}"
    );
    assert_eq!(phase(&bare), Phase::Unknown);
}

#[test]
fn lightgbms_kernel_build_is_start_up() {
    use crate::model::explain::EventKind;
    let facts = crate::parse::engine_log::parse_line_scan(
        "[LightGBM] [Info] Compiling OpenCL Kernel with 64 bins...",
    );
    assert!(facts
        .events
        .iter()
        .any(|event| event.kind == EventKind::DeviceInit && event.phase == Phase::Startup));
    let other = crate::parse::engine_log::parse_line_scan("Compiling OpenCL Kernel with options");
    assert!(other.events.is_empty());
    // Under a log's failure with nothing after the build, the build is the stage.
    let text = "[LightGBM] [Info] Using GPU Device: GeForce RTX 2080, Vendor: NVIDIA Corporation\n\
        [LightGBM] [Info] Compiling OpenCL Kernel with 64 bins...\n\
        terminate called after throwing an instance of 'boost::compute::opencl_error'\n  \
        what():  Memory Object Allocation Failure\n";
    let _ = phase(text);
}
