//! Session 46: the stages the first reading of sixteen blind batches missed (a track's stems
//! separated and a model's attributions, an epoch begun, a whole message quoted as the issue's
//! title above its run's log, an app's button pressed, Theano's and RMM's memory pools made at
//! start-up, an evaluation headed by its noun).

use super::s42_tests::{phase_of, MESSAGE};
use crate::analyze::explain::explain_text;
use crate::model::explain::Phase;

#[test]
fn separation_and_attribution_frames_are_inference() {
    let demucs = format!(
        "Separating track audio.mp3\n100%|██████████| 1/1 [00:10<00:00]\nTraceback (most \
         recent call last):\n  File \"/opt/venv/lib/python3.10/site-packages/demucs/\
         separate.py\", line 170, in main\n    sources = apply_model(model, wav[None])\n  File \
         \"/opt/venv/lib/python3.10/site-packages/demucs/apply.py\", line 211, in apply_model\n    \
         estimates += out\n{MESSAGE}"
    );
    assert_eq!(explain_text(&demucs).phase.failed_in, Phase::Inference);
    let uvr = format!(
        "Traceback (most recent call last):\n  File \"UVR.py\", line 6584, in process_start\n    \
         seperator.seperate()\n  File \"separate.py\", line 512, in seperate\n    source = \
         self.demix(mix)\n  File \"separate.py\", line 590, in demix\n    tar_waves = \
         self.run_model(mix_part)\n{MESSAGE}"
    );
    assert_eq!(explain_text(&uvr).phase.failed_in, Phase::Inference);
    let captum = format!(
        "Traceback (most recent call last):\n  File \"explain.py\", line 40, in <module>\n    \
         attributions = ig.attribute(inputs, target=0, n_steps=200)\n  File \"/usr/lib/python3/\
         site-packages/captum/attr/_core/integrated_gradients.py\", line 274, in attribute\n    \
         attributions = self._attribute(inputs=inputs)\n{MESSAGE}"
    );
    assert_eq!(explain_text(&captum).phase.failed_in, Phase::Inference);
}

#[test]
fn an_epoch_begun_is_the_training() {
    for begun in [
        "INFO - 03/10/19 15:43:47 - 0:00:27 - ============ Starting epoch 0 ... ============",
        "Starting Epoch: 0 Iteration: 0",
        "Start epoch 3",
    ] {
        let text = format!("{begun}\n{MESSAGE}");
        assert_eq!(
            explain_text(&text).phase.failed_in,
            Phase::TrainingStep,
            "{begun}"
        );
    }
    // Another loop's epoch, with no number after it.
    let other = format!("Start epoch evaluation\n{MESSAGE}");
    assert_eq!(explain_text(&other).phase.failed_in, Phase::Unknown);
}

#[test]
fn a_message_quoted_as_the_title_takes_its_runs_log() {
    let titled = format!(
        "# {MESSAGE}\nI set --bt_steps '' but it still OOMs.\n\npython train.py --exp_name \
         unsup\n\nINFO - 03/10/19 15:43:47 - 0:00:27 - ============ Starting epoch 0 ... \
         ============\nINFO - 03/10/19 15:43:47 - 0:00:27 - Creating new training data \
         iterator (ae,mn) ...\n"
    );
    assert_eq!(explain_text(&titled).phase.failed_in, Phase::TrainingStep);
    // Restated under the title by its traceback: the traceback's moment decides.
    let restated = format!(
        "# {MESSAGE}\nStarting epoch 0\nTraceback (most recent call last):\n  File \"x.py\", \
         line 3, in <module>\n    model = Net().cuda()\n{MESSAGE}"
    );
    assert_ne!(explain_text(&restated).phase.failed_in, Phase::TrainingStep);
}

#[test]
fn a_button_pressed_in_a_sentence_of_the_failure_names_its_stage() {
    assert_eq!(
        phase_of("When I click on generate, after a while I got the following error message"),
        Phase::Inference
    );
    assert_eq!(
        phase_of("I click generate and get this error"),
        Phase::Inference
    );
    // The sentence does not tell the failure: what ran is not said.
    assert_eq!(
        phase_of(
            "After clicking on Generate Video and waiting for the first download, the process \
             takes a very long time."
        ),
        Phase::Unknown
    );
    assert_eq!(
        phase_of("# RuntimeError: CUDA out of memory in training"),
        Phase::TrainingStep
    );
}

#[test]
fn memory_pools_made_at_start_up_and_an_evaluation_headed_by_its_noun() {
    let cnmem = "ERROR (theano.sandbox.cuda): ERROR: Not using GPU. Initialisation of device gpu \
                 failed:\ninitCnmem: cnmemInit call failed! Reason=CNMEM_STATUS_OUT_OF_MEMORY. \
                 numdev=1\n";
    assert_eq!(explain_text(cnmem).phase.failed_in, Phase::Startup);
    let rmm = "Traceback (most recent call last):\n  File \"/opt/conda/lib/python3.8/site-\
               packages/dask_cuda/utils.py\", line 56, in setup\n    rmm.reinitialize(\n  File \
               \"/opt/conda/lib/python3.8/site-packages/rmm/rmm.py\", line 84, in reinitialize\n    \
               rmm.mr._initialize(\n  File \"rmm/_lib/memory_resource.pyx\", line 273, in \
               rmm._lib.memory_resource.PoolMemoryResource.__cinit__\nMemoryError: \
               std::bad_alloc: out_of_memory: RMM failure at:/opt/conda/include/rmm/mr/device/\
               pool_memory_resource.hpp:192: Maximum pool size exceeded\n";
    assert_eq!(explain_text(rmm).phase.failed_in, Phase::Startup);
    let headed =
        format!("Features are ready!\nEvaluation: k-NN classification on ImageNet\n{MESSAGE}");
    assert_eq!(explain_text(&headed).phase.failed_in, Phase::Inference);
    // A result printed after the evaluation is no stage begun.
    let result = format!("Evaluation: top1 accuracy 0.913\n{MESSAGE}");
    assert_eq!(explain_text(&result).phase.failed_in, Phase::Unknown);
}

#[test]
fn a_codec_opened_a_runtime_made_and_an_engine_set_up_are_start_up() {
    let nvenc = "I0520 16:38:48.761972 8444 livepool.go:244] ***Livepeer is running***\n\
                 [h264_nvenc @ 0000023a79212040] OpenEncodeSessionEx failed: out of memory (10): \
                 (no details)\nERROR: encoder.c:199] Error opening video encoder : Cannot \
                 allocate memory\n";
    let report = explain_text(nvenc);
    assert!(report.is_gpu_oom);
    assert_eq!(report.phase.failed_in, Phase::Startup);
    let taichi =
        "Traceback (most recent call last):\n  File \"demo.py\", line 11, in <module>\n    \
                  ti.init(arch=ti.gpu, device_memory_GB=9)\n  File \"/opt/venv/lib/python3.8/\
                  site-packages/taichi/lang/misc.py\", line 473, in init\n    \
                  impl.get_runtime().prog.materialize_runtime()\nRuntimeError: \
                  [cuda_driver.h:operator()@88] CUDA Error CUDA_ERROR_OUT_OF_MEMORY: out of \
                  memory while calling malloc (cuMemAlloc_v2)\n";
    assert_eq!(explain_text(taichi).phase.failed_in, Phase::Startup);
    assert_eq!(
        phase_of(
            "After model initialization, during Deepspeed initialization I get the following:"
        ),
        Phase::Startup
    );
}

#[test]
fn an_apps_endpoint_named_for_its_model_failing_under_the_oom_is_a_request() {
    let served = format!(
        "{MESSAGE}127.0.0.1 - - [10/Jan/2021 10:00:00] \"POST /translate HTTP/1.1\" 500 -\n"
    );
    assert_eq!(explain_text(&served).phase.failed_in, Phase::Inference);
    // A path that loads a model is no request served.
    let load = format!(
        "{MESSAGE}127.0.0.1 - - [10/Jan/2021 10:00:00] \"POST /switch-model HTTP/1.1\" 500 -\n"
    );
    assert_ne!(explain_text(&load).phase.failed_in, Phase::Inference);
}

#[test]
fn a_sentence_introducing_the_error_does_not_hide_the_programs_last_line() {
    let split = format!(
        "```\nResampling...\n  Resampled in 18.83s\nPredicting part 1 of 5 ...\n```\n\nand I get \
         the below error:\n```\n{MESSAGE}```\n"
    );
    assert_eq!(explain_text(&split).phase.failed_in, Phase::Inference);
    // A sentence that names a stage is the reporter's reading, not a bridge over it.
    let named = format!(
        "Predicting part 1 of 5 ...\n\nwhile training I get the following error:\n{MESSAGE}"
    );
    assert_eq!(explain_text(&named).phase.failed_in, Phase::TrainingStep);
}
