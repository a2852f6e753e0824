//! Session 40 (f2): XGBoost's C API frames in dmlc-core's stack trace, TensorFlow's variable
//! creation, a TensorRT engine's failed deserialization, `ollama create`'s conversion status.

use crate::analyze::explain::explain_text;
use crate::model::explain::Phase;

fn phase(text: &str) -> Phase {
    explain_text(text).phase.failed_in
}

const XGB_OOM: &str = "xgboost.core.XGBoostError: [10:12:01] /workspace/src/common/\
device_helpers.cuh:431: Memory allocation error on worker 0: std::bad_alloc: \
cudaErrorMemoryAllocation: out of memory\n- Free memory: 1.2GB\n- Requested memory: 4.5GB\n\n\
Stack trace:\n  [bt] (0) /venv/lib/python3.10/site-packages/xgboost/lib/libxgboost.so(+0x41589e) \
[0x7fdf587f989e]\n";

#[test]
fn xgboosts_c_api_frame_names_the_boosting_round_or_the_prediction() {
    let frame = |symbol: &str| {
        format!(
            "{XGB_OOM}  [bt] (5) /venv/lib/python3.10/site-packages/xgboost/lib/libxgboost.so(\
             {symbol}+0x70) [0x7fdf58545a10]\n"
        )
    };
    assert_eq!(phase(&frame("XGBoosterUpdateOneIter")), Phase::TrainingStep);
    assert_eq!(
        phase(&frame("XGBoosterPredictFromDMatrix")),
        Phase::Inference
    );
    // An offset alone names no function; another library's export decides nothing.
    assert_eq!(phase(XGB_OOM), Phase::Unknown);
    assert_eq!(
        phase(&format!(
            "{XGB_OOM}  [bt] (5) /usr/lib/libother.so(XGBoosterUpdateOneIter+0x70) [0x7f]\n"
        )),
        Phase::Unknown
    );
}

const TF_OOM: &str = "ResourceExhaustedError: OOM when allocating tensor with \
shape[3,3,512,512] and type float on /job:localhost/replica:0/task:0/device:GPU:0 by allocator \
GPU_0_bfc [Op:Add]";

fn tf_trace(frames: &[(&str, &str)]) -> String {
    let mut text = String::from("Traceback (most recent call last):\n");
    for (file, function) in frames {
        text.push_str(&format!(
            "  File \"/venv/lib/python3.9/site-packages/{file}\", line 10, in {function}\n    x = 1\n"
        ));
    }
    text.push_str(TF_OOM);
    text.push('\n');
    text
}

#[test]
fn tensorflows_variable_creation_builds_the_weights_unless_an_optimizer_makes_its_slots() {
    let creation = [
        ("tensorflow/python/ops/variables.py", "_variable_v1_call"),
        (
            "tensorflow/python/ops/variable_scope.py",
            "default_variable_creator",
        ),
    ];
    assert_eq!(phase(&tf_trace(&creation)), Phase::WeightsLoad);
    let slots = [
        ("keras/optimizer_v2/optimizer_v2.py", "apply_gradients"),
        ("keras/optimizer_v2/optimizer_v2.py", "_create_all_weights"),
        ("keras/optimizer_v2/adam.py", "_create_slots"),
        ("tensorflow/python/ops/variables.py", "_variable_v2_call"),
    ];
    assert_eq!(phase(&tf_trace(&slots)), Phase::TrainingStep);
}

#[test]
fn a_tensorrt_engine_that_failed_to_deserialize_was_being_loaded() {
    let log = "[TensorRT-LLM][ERROR] [defaultAllocator.cpp::allocate::31] Error Code 1: Cuda \
               Runtime (out of memory)\n";
    for line in [
        "[TensorRT-LLM][ERROR] Assertion failed: Failed to deserialize cuda engine. (/src/cpp/\
         tensorrt_llm/runtime/tllmRuntime.cpp:135)",
        "[E] 2: [safeDeserialize.cpp::load::269] Error Code 2: OutOfMemory (no further \
         information)",
        "[!] Could not deserialize engine. See log for details.",
    ] {
        assert_eq!(
            phase(&format!("{log}{line}\n")),
            Phase::WeightsLoad,
            "{line}"
        );
    }
    // A sentence about deserializing something else says nothing.
    assert_eq!(
        phase(&format!(
            "{log}the JSON config failed to deserialize cleanly\n"
        )),
        Phase::Unknown
    );
}

#[test]
fn ollama_creates_conversion_status_opens_the_conversion() {
    let run = |status: &str| {
        format!(
            "$ ollama create mymodel\ntransferring model data 100%\n{status}\nError: write \
             /usr/share/ollama/.ollama/models/blobs/3649787503/fp164117961266: no space left on \
             device\n"
        )
    };
    assert_eq!(phase(&run("converting model")), Phase::FormatConversion);
    assert_eq!(
        phase(&run("\u{280b} converting adapter")),
        Phase::FormatConversion
    );
    // A sentence that uses the words, or a full disk in another stage, is no conversion.
    assert_ne!(
        phase(&run("I was converting model weights yesterday")),
        Phase::FormatConversion
    );
    assert_eq!(phase(&run("loading model into memory")), Phase::Unknown);
}

#[test]
fn a_kill_right_under_comfyuis_model_creation_lines_is_the_load() {
    let log = |tail: &str| {
        format!(
            "Using pytorch attention in VAE\nmodel weight dtype torch.bfloat16, manual cast: \
             None\nmodel_type FLOW\n{tail}"
        )
    };
    assert_eq!(
        phase(&log(
            "/comfy/run.bash: line 21:   116 Killed   python3 ./main.py --listen\n"
        )),
        Phase::WeightsLoad
    );
    // Fooocus prints ComfyUI's `adm N` under it.
    assert_eq!(
        phase("model_type EPS\nadm 2816\nKilled\n"),
        Phase::WeightsLoad
    );
    // A kill after another line (a sampler's start), or a sentence naming a model type, is not.
    assert_ne!(phase(&log("got prompt\nKilled\n")), Phase::WeightsLoad);
    assert_ne!(
        phase("the model_type is FLOW here\nKilled\n"),
        Phase::WeightsLoad
    );
}
