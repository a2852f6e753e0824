//! Session 48: the stages and engines the first reading of sixteen blind batches missed (the
//! purpose of the reporter's own use of a project, a politeness to its author, a count reached
//! at its unit, embeddings extracted, a misspelt epoch; whisper.cpp, spaCy, ONNX Runtime, a
//! Keras 3 torch backend and a model whose name ends in `llama`).

use super::s42_tests::{phase_of, MESSAGE};
use crate::analyze::explain::explain_text;
use crate::model::explain::Phase;
use crate::model::failure::EngineName;

#[test]
fn the_reporters_use_of_the_project_names_its_purpose() {
    let using = "Hello, I am using your code to train PointLK, but my video card only has 8g of \
                 video memory, so there is always the problem of video memory allocation, do \
                 you have a solution?";
    assert_eq!(phase_of(using), Phase::TrainingStep);
    // A plain statement of the set-up, with no failure in its sentence, says nothing of when.
    assert_eq!(
        phase_of("We use 8 GPUs to train the model."),
        Phase::Unknown
    );
    assert_eq!(
        phase_of("I use 8 A100 to train the model. It takes 3 days."),
        Phase::Unknown
    );
    // Advice keeps its guard: the reader's batch, not the author's code.
    assert_eq!(
        phase_of("You should reduce your batch size when you train"),
        Phase::Unknown
    );
}

#[test]
fn a_courtesy_to_the_author_guards_nothing() {
    let polite = "Dear Author, I'm sorry to bother you, I have met this problem when I ran to 35 \
                  epoches:";
    assert_eq!(phase_of(polite), Phase::TrainingStep);
    assert_eq!(phase_of("when I ran to 35 epoches"), Phase::TrainingStep);
}

#[test]
fn a_count_reached_at_its_unit_is_the_trainings_course() {
    for words in [
        "I have only a 3060, I set the batchsize 2, but happens OutOfMemoryError at 5000 iters",
        "it OOMs at 300 steps",
        "OOM after 5000 iters",
    ] {
        assert_eq!(phase_of(words), Phase::TrainingStep, "{words}");
    }
    assert_eq!(
        phase_of("the server crashed at 10 requests"),
        Phase::Unknown
    );
}

#[test]
fn embeddings_extracted_are_a_model_applied_to_inputs() {
    for words in [
        "I got OOM when extracting embeddings",
        "CUDA OOM when generating embeddings for my documents",
        "It fails while computing embeddings for 50k sequences",
    ] {
        assert_eq!(phase_of(words), Phase::Inference, "{words}");
    }
    // A negation keeps its guard (`no way to get embeddings` says what is missing).
    assert_eq!(
        phase_of("There is no way to get embeddings for sequences of 1M tokens"),
        Phase::Unknown
    );
}

#[test]
fn other_programs_on_ggml_are_not_llama_cpp() {
    let told = "I tried to transcribe with whisper.cpp on Windows 10 with GTX1650 and Vulkan \
                enabled, but it failed with error that it's out of memory with [ivrit.ai model](\
                https://huggingface.co/ivrit-ai/whisper-v2-d4-ggml/resolve/main/ggml-ivrit-v2-d4\
                .bin) (large) though the graphic card has 4GB vram.\n";
    assert_eq!(explain_text(told).engine.name, EngineName::Other);
    let rust = "2025-01-20T06:21:36.137042Z DEBUG whisper_rs::whisper_sys_tracing: C:\\x\\src\\\
                whisper_sys_tracing.rs:20: ggml_gallocr_reserve_n: reallocating Vulkan0 buffer \
                from size 0.00 MiB to 160.77 MiB\nggml_vulkan: Device memory allocation of size \
                168576000 failed.\nggml_vulkan: vk::Device::allocateMemory: \
                ErrorOutOfDeviceMemory\n";
    assert_eq!(explain_text(rust).engine.name, EngineName::Other);
    // llama.cpp's own log stays llama.cpp's.
    let llama = "ggml_vulkan: Device memory allocation of size 168576000 failed.\nggml_vulkan: \
                 vk::Device::allocateMemory: ErrorOutOfDeviceMemory\nllama_model_load: error \
                 loading model: unable to allocate Vulkan0 buffer\n";
    assert_eq!(explain_text(llama).engine.name, EngineName::Llamacpp);
}

#[test]
fn spacys_training_loop_is_not_lightning() {
    let text = format!(
        "============================= Training pipeline =============================\nEpoch \
         1:  15%|████▍        | 347/2300 [08:11<51:33,  1.58s/it]⚠ Aborting and saving the \
         final best model. Encountered exception:\n{MESSAGE}"
    );
    let report = explain_text(&text);
    assert_eq!(report.engine.name, EngineName::Other);
    assert_eq!(report.phase.failed_in, Phase::TrainingStep);
}

#[test]
fn onnx_runtimes_own_log_outranks_a_torch_import() {
    let text = "```python\nimport torch\nimport onnxruntime\n```\n2023-06-28 00:26:20.785945699 \
                [E:onnxruntime:, sequential_executor.cc:514 ExecuteKernel] Non-zero status code \
                returned while running If node. Status Message: CUBLAS failure 3: \
                CUBLAS_STATUS_ALLOC_FAILED\n";
    assert_eq!(explain_text(text).engine.name, EngineName::Other);
}

#[test]
fn keras_3s_torch_backend_is_pytorchs_work() {
    let text = format!(
        "  File \"/usr/local/lib/python3.11/dist-packages/keras/src/backend/torch/trainer.py\", \
         line 57, in train_step\n    y_pred = self(x)\ntorch.OutOfMemoryError: CUDA out of \
         memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 14.74 GiB of which \
         1.00 GiB is free.\n{MESSAGE}"
    );
    assert_eq!(explain_text(&text).engine.name, EngineName::Pytorch);
}

#[test]
fn a_models_name_ending_in_llama_is_not_ollama() {
    let text = "1. I am using the Videollama3-7b model to fine tune my own video data set based \
                on A100 graphics card. Why does the video memory surge after a few epochs, \
                exceeding 80g causing video memory overflow? CUDA out of memory\n";
    assert_ne!(explain_text(text).engine.name, EngineName::Ollama);
}

#[test]
fn pytorchs_memory_summary_names_pytorch() {
    let text = "# OOM error where ~50% of the GPU RAM cannot be utilised/reserved\n\n```\n|     \
                PyTorch CUDA memory summary, device ID 0                 |\n|            CUDA \
                OOMs: 1            |        cudaMalloc retries: 1         |\n```\n";
    let report = explain_text(text);
    assert!(report.is_gpu_oom);
    assert_eq!(report.engine.name, EngineName::Pytorch);
}

#[test]
fn a_count_of_training_iterations_and_a_model_fitted_are_the_training() {
    for words in [
        "the code crashes only after few training iterations and not immediately",
        "it failed after 100 training steps",
        "I'm having this CUDA error when fitting the classifier",
    ] {
        assert_eq!(phase_of(words), Phase::TrainingStep, "{words}");
    }
    // A model that does not fit names the memory, not a training.
    assert_eq!(phase_of("the model is not fitting the GPU"), Phase::Unknown);
}

#[test]
fn the_allocators_sentence_quoted_without_its_class_is_pytorchs() {
    let text = "I have set the batch size to 1, but the problem of \"CUDA out of memory Tried to \
                allocate 38.49 GiB \" still occurs when training on UCF-QNRF dataset\n";
    assert_eq!(explain_text(text).engine.name, EngineName::Pytorch);
}

#[test]
fn torch7s_optim_package_is_an_optimisation_step() {
    let text =
        "/home/ubuntu/torch/install/bin/luajit: neural_style.lua:484: cuda runtime error (2) \
                : out of memory at /tmp/luarocks_cutorch-scm-1/cutorch/lib/THC/generic/THCStorage\
                .cu:40\nstack traceback:\n        [C]: in function 'resize'\n        \
                neural_style.lua:484: in function 'updateGradInput'\n        /home/ubuntu/torch/\
                install/share/lua/5.1/optim/adam.lua:33: in function 'adam'\n        \
                neural_style.lua:343: in function 'main'\n";
    assert_eq!(explain_text(text).phase.failed_in, Phase::TrainingStep);
}

#[test]
fn converters_run_from_a_shell_are_a_conversion() {
    let ct2 = "ct2-transformers-converter --model tiiuae/falcon-40b-instruct --quantization int8 \
               --output_dir falcon-40b-instruct-int8\nKilled\n";
    let report = explain_text(ct2);
    assert_eq!(report.engine.name, EngineName::Ctranslate2);
    assert_eq!(report.phase.failed_in, Phase::FormatConversion);
    let hf = "`python convert_llama_weights_to_hf.py --input_dir ../original --model_size 8B \
              --output_dir hf` I got killed error\nKilled\n";
    assert_eq!(explain_text(hf).phase.failed_in, Phase::FormatConversion);
    // The converter named in a sentence runs nothing.
    let told = "Is ct2-transformers-converter able to convert this model?\nKilled\n";
    assert_ne!(explain_text(told).engine.name, EngineName::Ctranslate2);
}

#[test]
fn funasrs_keywords_are_not_transformers_generate() {
    let text = "model = AutoModel(\n    model=model_dir,\n    vad_model=vad_model,\n    \
                punc_model=punc_model,\n)\nres = model.generate(\n    input=local_path,\n)\n\
                torch.OutOfMemoryError: CUDA out of memory.\n";
    assert_eq!(explain_text(text).engine.name, EngineName::Other);
}

#[test]
fn an_issue_forms_optional_framework_field_names_nothing() {
    let text =
        "**PyTorch Version (if applicable)**: 1.13\n**Tensorflow Version (if applicable)**: \
                \n[W] Skipping tactic 0x0000000000000000 due to exception autotuning: CUDA error 2 \
                allocating 2147747325-byte buffer: out of memory\n";
    assert_ne!(explain_text(text).engine.name, EngineName::Tensorflow);
}
