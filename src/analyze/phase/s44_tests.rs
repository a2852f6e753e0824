//! Session 44: the stages, engines and failures the first reading of five blind batches missed
//! (a step counted after its unit, runs counted with `more`, a reply's aside on the writer's own
//! runs, a program's behaviour told with `will attempt to`, an app's words before an exception's
//! repr, a Markdown heading above the error, torch.load's inner frames, spaCy's update, a GAN's
//! networks at work, pix2pix's losses line, TensorFlow's context creation and its import lines,
//! a program used before, an HBM `RESOURCE_EXHAUSTED` title, and a mention the host's message
//! under it names).

use super::s42_tests::{phase_of, MESSAGE};
use crate::analyze::explain::explain_text;
use crate::model::explain::Phase;
use crate::model::failure::EngineName;

#[test]
fn a_step_named_before_its_count_and_runs_counted_with_more_are_the_stage() {
    for words in [
        "Run on an NVIDIA V100 and got the following OOM error after the step 0:",
        "got the following OOM error after step 100:",
        "It crashed after iteration 3:",
        "got the following OOM error on step 100:",
    ] {
        assert_eq!(phase_of(words), Phase::TrainingStep, "{words}");
    }
    for words in [
        "Following a few more code completions, the system throws an Out-Of-Memory (OOM) error.",
        "After 3 more requests it crashed with OOM",
    ] {
        assert_eq!(phase_of(words), Phase::Inference, "{words}");
    }
    for words in [
        "You should save after step 100",
        "following the instructions, I ran it and got OOM",
    ] {
        assert_eq!(phase_of(words), Phase::Unknown, "{words}");
    }
}

#[test]
fn an_aside_on_other_runs_and_a_behaviour_told_are_no_stage() {
    for words in [
        "if it is too big, this error can happen (personally I always have this problem when I \
         try to train the m2m100 model with google colabs).",
        "In my experience this happens when you try to train on Colab",
        "the inference engine will attempt to load the model in int8 mode.",
        "it will try to load the model",
        "I currently study GAN to help super-resolution task, e.g. ESRGAN.",
    ] {
        assert_eq!(phase_of(words), Phase::Unknown, "{words}");
    }
    assert_eq!(phase_of("when I try to load the model"), Phase::WeightsLoad);
    assert_eq!(
        phase_of("When I run video super resolution model, there is an error"),
        Phase::Inference
    );
}

#[test]
fn an_apps_words_before_an_exceptions_repr_name_the_stage() {
    let text = "**Logs**\n10:29PM ERR Server error error=\"could not load model (no success): \
                Unexpected err=RuntimeError('CUDA error: out of memory\\nCUDA kernel errors might \
                be asynchronously reported at some other API call')\"\n";
    let report = explain_text(text);
    assert!(report.is_gpu_oom);
    assert_eq!(report.phase.failed_in, Phase::WeightsLoad);
    // A Markdown heading between a line and the error ends the search for the program's status
    // line: what stands above it is the reporter's.
    let text = format!("generating an image\n\n**Logs**\n{MESSAGE}\n");
    let report = explain_text(&text);
    assert!(
        !report
            .phase
            .evidence
            .join(" ")
            .contains("log line announcing"),
        "{:?}",
        report.phase.evidence
    );
}

#[test]
fn frames_of_torch_load_spacy_and_a_gans_networks_name_the_stage() {
    let load = format!(
        "Traceback (most recent call last):\n  File \"C:\\Python36\\lib\\site-packages\\torch\\\
         serialization.py\", line 155, in default_restore_location\n    result = fn(storage, \
         location)\n  File \"C:\\Python36\\lib\\site-packages\\torch\\serialization.py\", line \
         135, in _cuda_deserialize\n    return storage_type(obj.size())\n{MESSAGE}\n"
    );
    assert_eq!(explain_text(&load).phase.failed_in, Phase::WeightsLoad);
    let spacy = format!(
        "Traceback (most recent call last):\n  File \"train.py\", line 87, in main\n    \
         nlp.update(texts, annotations, sgd=optimizer, drop=0.1, losses=losses)\n  File \
         \"/usr/lib/python3.6/dist-packages/spacy_pytorch_transformers/language.py\", line 83, \
         in update\n    docs, drop=drop\n{MESSAGE}\n"
    );
    assert_eq!(explain_text(&spacy).phase.failed_in, Phase::TrainingStep);
    let spade = format!(
        "Traceback (most recent call last):\n  File \"train.py\", line 46, in <module>\n    \
         trainer.run_generator_one_step(data_i)\n  File \"/x/SynthCP/trainers/pix2pix_trainer.py\
         \", line 36, in run_generator_one_step\n    g_losses, generated\n{MESSAGE}\n"
    );
    assert_eq!(explain_text(&spade).phase.failed_in, Phase::TrainingStep);
    let discriminator = format!(
        "Traceback (most recent call last):\n  File \"train_stylegan.py\", line 98, in main\n    \
         real_logit = D(real_img)\n  File \"/x/torch/nn/modules/module.py\", line 493, in \
         __call__\n    result = self.forward(*input, **kwargs)\n{MESSAGE}\n"
    );
    assert_eq!(
        explain_text(&discriminator).phase.failed_in,
        Phase::TrainingStep
    );
    // pix2pix's visualizer prints each iteration's losses.
    let losses = format!(
        "(epoch: 13, iters: 1879, time: 3.255) G_GAN_Feat: 10.054 G_VGG: 8.721 D_real: 0.057\n\
         {MESSAGE}\n"
    );
    assert_eq!(explain_text(&losses).phase.failed_in, Phase::TrainingStep);
}

#[test]
fn tensorflows_context_creation_and_its_import_lines() {
    let text = "when the bert model is loading, something bad occurs like this:\n\
                _tensorflow.python.framework.errors_impl.InternalError: CUDA runtime implicit \
                initialization on GPU:0 failed. Status: out of memory_\n";
    let report = explain_text(text);
    assert!(report.is_gpu_oom);
    assert_eq!(report.phase.failed_in, Phase::Startup);
    assert_eq!(report.engine.name, EngineName::Tensorflow);
    // TensorFlow imported by another library prints its loader's line: PyTorch ran the model.
    let text = "2020-11-22 22:02:22.921355: I tensorflow/stream_executor/platform/default/\
                dso_loader.cc:48] Successfully opened dynamic library libcudart.so.10.1\n\
                RuntimeError: CUDA out of memory.\n";
    assert_ne!(explain_text(text).engine.name, EngineName::Tensorflow);
}

#[test]
fn a_program_used_before_is_not_the_engine() {
    let text = format!(
        "3、之前用ollama从没遇到提示GPU资源不足，是不是ollama会自动从不同的gpu获取资源\n{MESSAGE}\n"
    );
    assert_ne!(explain_text(&text).engine.name, EngineName::Ollama);
    let text = format!("I run it with ollama and it fails:\n{MESSAGE}\n");
    assert_eq!(explain_text(&text).engine.name, EngineName::Ollama);
}

#[test]
fn an_hbm_resource_exhausted_title_is_the_accelerators() {
    let report = explain_text("# We get HBM0 RESOURCE_EXHAUSTED error when loading 8b models.\n");
    assert!(report.is_gpu_oom);
    assert!(!explain_text("# RESOURCE_EXHAUSTED error from the gRPC quota\n").is_gpu_oom);
}

#[test]
fn a_mention_that_names_no_gpu_is_the_hosts_message_under_it() {
    let text = "# OOM on preprocessing dataset with large number of documents\n\nWhen processing \
                a dataset, preprocessing runs out of memory.\n```\nTraceback (most recent call \
                last):\n  File \"tools/preprocess_data.py\", line 227, in <module>\n    main()\n\
                MemoryError\n```\n";
    assert!(!explain_text(text).is_gpu_oom);
    // A mention that names the GPU stays the GPU's.
    let text = "# CUDA OOM on preprocessing dataset\n```\nTraceback (most recent call last):\n  \
                File \"tools/preprocess_data.py\", line 227, in <module>\n    main()\n\
                MemoryError\n```\n";
    assert!(explain_text(text).is_gpu_oom);
}

#[test]
fn the_second_five_batches_stages_and_mentions() {
    // A forecasting script's announcement above bars of unknown length.
    let text = format!(
        "2024-11-18 16:00:54,155 - Chronos Evaluation - INFO - Generating forecasts for ETTh (4 \
         time series)\n0it [00:04, ?it/s]\n0it [00:05, ?it/s]\nTraceback (most recent call \
         last):\n  File \"/x/torch/nn/modules/module.py\", line 1, in forward\n    return x\n\
         {MESSAGE}\n"
    );
    assert_eq!(explain_text(&text).phase.failed_in, Phase::Inference);
    // llm-compressor's GPTQ modifier and its sequential pipeline's bars.
    for line in [
        "2025-02-03T22:56:14.307844+0800 | on_sequential_batch_end | INFO - Quantizing \
         model.layers.39.mlp.down_proj using 128 samples",
        "(41/41): Calibrating:  50%|█████     | 256/512 [00:10<00:10]",
    ] {
        let text = format!("{line}\n{MESSAGE}\n");
        assert_eq!(
            explain_text(&text).phase.failed_in,
            Phase::FormatConversion,
            "{line}"
        );
    }
    // CUDA's memory named in the reporter's words, and a title's capitals.
    for words in [
        "When I fold a single sequence, I get a \"RuntimeError: Out of CUDA memory\" error",
        "# Running out of GPU Memory",
    ] {
        assert!(explain_text(words).is_gpu_oom, "{words}");
    }
    assert!(!explain_text("to avoid running out of CUDA memory, use smaller batches\n").is_gpu_oom);
}
