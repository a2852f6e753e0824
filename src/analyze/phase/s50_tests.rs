//! Session 50: the stages the first reading of the session's blind batches missed (a model's
//! part or a model built announced in a log line, gdb's backtrace of llama.cpp, TensorFlow's
//! gradient ops named by eager mode, a training's course said short, a training not yet begun,
//! SGLang 0.1's prefill, ultralytics' mosaic closing).

use super::s42_tests::{phase_of, MESSAGE};
use crate::analyze::explain::explain_text;
use crate::model::explain::Phase;

#[test]
fn a_log_line_loading_a_part_or_building_a_model_is_the_load() {
    for line in [
        "load speaker brain model...",
        "loading the VAE",
        "Loading text encoder ...",
        "Building model...",
        "Creating the model...",
        "[info] Initializing QuantizedFluxModel",
        "Creating WanModel from /weights/Wan2.1-I2V-14B",
    ] {
        assert_eq!(phase_of(line), Phase::WeightsLoad, "{line}");
    }
    // The model's parallel groups, its settings, or a load's timing are not its parameters.
    for line in [
        "> initializing model parallel with size 1",
        "creating model config from defaults",
        "load time = 1234.56 ms",
        "Initializing the environment",
    ] {
        assert_ne!(phase_of(line), Phase::WeightsLoad, "{line}");
    }
}

const GGML_ABORT: &str = "/app/ggml/src/ggml-cuda/ggml-cuda.cu:70: CUDA error\nCUDA error: out of \
                          memory\n  current device: 0, in function ggml_backend_cuda_graph_compute \
                          at ggml/src/ggml-cuda/ggml-cuda.cu:2500\n";

#[test]
fn gdbs_backtrace_of_llama_cpp_is_read_innermost_first() {
    // The server's loop decoding a request's batch (frames with source lines between them).
    let serving = format!(
        "{GGML_ABORT}#14 llama_decode (ctx=0x63a0799b94c0, batch=...) at src/llama.cpp:18338\n\
         18338\t    const int ret = llama_decode_internal(*ctx, batch);\n#15 0x000063a052cd93a0 \
         in server_context::update_slots (this=0x7ffc150bd8e0) at \
         examples/server/server.cpp:2339\n2339\t            const int ret = llama_decode(ctx, \
         batch_view);\n#16 0x000063a052cc8b12 in server_queue::start_loop \
         (this=this@entry=0x7ffc150be380) at examples/server/server.cpp:500\n#17 \
         0x000063a05291a961 in main (argc=<optimized out>, argv=<optimized out>) at \
         examples/server/server.cpp:3440\n"
    );
    assert_eq!(explain_text(&serving).phase.failed_in, Phase::Inference);
    // The warm-up decode of the common start-up.
    let warm_up = format!(
        "{GGML_ABORT}#0  0x00007dc7bf87142f in __GI___wait4 (pid=255, stat_loc=0x0) at \
         ../sysdeps/unix/sysv/linux/wait4.c:30\n#1  0x0000647041457f0b in ggml_print_backtrace \
         ()\n#2  0x000064704132bb47 in ggml_cuda_error(char const*, char const*, char const*, \
         int, char const*) ()\n#3  0x00006470414fdd7a in llama_decode ()\n#4  \
         0x00006470415ca265 in llama_init_from_gpt_params(gpt_params&) ()\n#5  \
         0x000064704131315e in main ()\n"
    );
    assert_eq!(explain_text(&warm_up).phase.failed_in, Phase::Profiling);
    // The innermost stage decides: the model's load inside the common start-up.
    let load = format!(
        "{GGML_ABORT}#3  0x00007f in ggml_backend_alloc_ctx_tensors_from_buft () from \
         /app/libggml-base.so\n#4  0x00007f in llm_load_tensors(llama_model_loader&) () from \
         /app/libllama.so\n#5  0x00007f in llama_model_load () from /app/libllama.so\n#6  \
         0x00007f in llama_load_model_from_file () from /app/libllama.so\n#7  0x00007f in \
         llama_init_from_gpt_params(gpt_params&) ()\n#8  0x00007f in main ()\n"
    );
    assert_eq!(explain_text(&load).phase.failed_in, Phase::WeightsLoad);
    // The rules' path is gdb's mark; llama-cpp-python's ctypes wrappers carry the same names in
    // a Python traceback: not gdb's.
    assert_eq!(crate::parse::engine_log::GDB_FRAME_FILE, "<gdb>");
    assert_eq!(
        crate::analyze::phase::frame_phase(
            "llama_init_from_gpt_params",
            "/x/site-packages/llama_cpp/llama_cpp.py"
        ),
        None
    );
}

#[test]
fn tensorflows_gradient_op_named_by_eager_mode_is_a_training_step() {
    for op in [
        "Conv2DBackpropInput",
        "Conv2DBackpropFilter",
        "MaxPoolGrad",
        "FusedBatchNormGradV3",
        "ResourceApplyAdam",
    ] {
        let text = format!(
            "tensorflow.python.framework.errors_impl.ResourceExhaustedError: OOM when \
             allocating tensor with shape[4,96,98,322] and type float on \
             /job:localhost/replica:0/task:0/device:GPU:0 by allocator GPU_0_bfc [Op:{op}]\n"
        );
        assert_eq!(
            explain_text(&text).phase.failed_in,
            Phase::TrainingStep,
            "{op}"
        );
    }
    // A forward op says nothing of the stage.
    let forward = "tensorflow.python.framework.errors_impl.ResourceExhaustedError: OOM when \
                   allocating tensor with shape[4,96,98,322] and type float on \
                   /job:localhost/replica:0/task:0/device:GPU:0 by allocator GPU_0_bfc \
                   [Op:Conv2D]\n";
    assert_eq!(explain_text(forward).phase.failed_in, Phase::Unknown);
}

#[test]
fn a_trainings_course_said_short_and_a_training_not_begun() {
    for words in [
        "# Out of memory mid epoch",
        "it crashes mid-training",
        "OOM mid-epoch every time",
    ] {
        assert_eq!(phase_of(words), Phase::TrainingStep, "{words}");
    }
    // A thing made during the training is not the training at work.
    assert_ne!(
        phase_of("I saved a mid-training checkpoint and loading it fails"),
        Phase::TrainingStep
    );
    assert_eq!(
        phase_of("getting a CUDA Out of Memory error even before any training begins"),
        Phase::Startup
    );
}

#[test]
fn sglang_0_1s_prefill_and_ultralytics_mosaic_closing() {
    let sglang = format!(
        "Traceback (most recent call last):\n  File \
         \"/x/site-packages/sglang/srt/managers/router/model_rpc.py\", line 140, in \
         exposed_step\n    self.forward_step()\n  File \
         \"/x/site-packages/sglang/srt/managers/router/model_rpc.py\", line 344, in \
         forward_fill_batch\n    ) = self.model_runner.forward(\n{MESSAGE}"
    );
    assert_eq!(explain_text(&sglang).phase.failed_in, Phase::Inference);
    let mosaic = format!("Closing dataloader mosaic\n{MESSAGE}");
    assert_eq!(explain_text(&mosaic).phase.failed_in, Phase::TrainingStep);
    // Said in a sentence, the words are the reporter's.
    assert_ne!(
        phase_of("Closing dataloader mosaic is an option I changed"),
        Phase::TrainingStep
    );
}

#[test]
fn round_three_words_and_lines() {
    // A deployment, nothing loaded yet, SFT named short, a model in training, a heading that
    // ends with the training's failure, a model moved onto the GPU.
    let titled = |title: &str| {
        explain_text(&format!(
            "{title}\n\nSome details here.\n\n```\n{MESSAGE}```\n"
        ))
        .phase
        .failed_in
    };
    for (words, phase) in [
        (
            "# Failure to Deploy Llama-3.2-11B-Vision-Instruct Locally via vllm Due to OOM",
            Phase::Startup,
        ),
        (
            "[Bug]: CUDA: out of memory before even loading any models",
            Phase::Startup,
        ),
        (
            "# oom when sft Qwen1.5-32B-Chat using deepspeed",
            Phase::TrainingStep,
        ),
        (
            "Llama 3 8b OOMs immediately when being tuned with GaLore at 8k",
            Phase::TrainingStep,
        ),
        ("# reward model train OOM", Phase::TrainingStep),
        (
            "I get Not enough VRAM error when moving the models to the graphics card",
            Phase::WeightsLoad,
        ),
        ("OOM when moving the model to GPU", Phase::WeightsLoad),
    ] {
        assert_eq!(titled(words), phase, "{words}");
    }
    // A model moved off the GPU, a heading naming the training's data.
    assert_eq!(
        titled("moving the model to the CPU fixed it"),
        Phase::Unknown
    );
    assert_eq!(titled("# Qwen2 data loading train OOM"), Phase::Unknown);
}

#[test]
fn lightnings_batch_size_trial_and_text_generation_webuis_thread() {
    let trial = format!(
        "Batch size 128 succeeded, trying batch size 256\nTraceback (most recent call \
         last):\n  File \"/x/train.py\", line 9, in <module>\n    trainer.tune(model)\n{MESSAGE}"
    );
    assert_eq!(explain_text(&trial).phase.failed_in, Phase::TrainingStep);
    let webui = format!(
        "Traceback (most recent call last):\n  File \
         \"D:\\oobabooga\\text-generation-webui\\modules\\callbacks.py\", line 66, in \
         gentask\n    ret = self.mfunc(callback=_callback, **self.kwargs)\n{MESSAGE}"
    );
    assert_eq!(explain_text(&webui).phase.failed_in, Phase::Inference);
}
