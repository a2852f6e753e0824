//! Whole-text checks of engine log lines (`parse::engine_log`): a stage line decides the failed
//! phase only for the failure it belongs to, not for a later one far below it or after its end.

use super::explain_text;
use crate::model::explain::Phase;

#[test]
fn a_load_line_shows_the_stage_only_until_the_load_ends() {
    let oom = "torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 20.00 MiB \
               (GPU 0; 4.00 GiB total capacity; 3.10 GiB already allocated)\n";
    let during = format!("INFO:Loading acme-13b-GPTQ-4bit...\n{oom}");
    assert_eq!(explain_text(&during).phase.failed_in, Phase::WeightsLoad);
    // The same line long before a failure after the load ended is not the stage.
    let after = format!(
        "INFO:Loading acme-13b-GPTQ-4bit...\nINFO:Loaded the model in 8.10 seconds.\n\
         Running on local URL:  http://127.0.0.1:7860\n{oom}"
    );
    assert_ne!(explain_text(&after).phase.failed_in, Phase::WeightsLoad);
}

#[test]
fn a_warm_up_error_is_profiling_only_for_its_own_failure() {
    let warmup = "E0504 19:31:21.415679 91 backend_model_instance.cc:99] warmup error: \
                  Internal - 2 root error(s) found. (0) Resource exhausted: OOM when allocating \
                  tensor with shape[128,3,299,299]\n";
    assert_eq!(explain_text(warmup).phase.failed_in, Phase::Profiling);
    // Far above a later failure of the caller's own code, it says nothing of that one.
    let text = far_above_a_later_failure(
        "E0504 19:31:21.415679 91 backend_model_instance.cc:99] warmup error: Internal - model \
         not ready",
        |n| format!("I0504 19:40:00.000000 91 http_server.cc:1] request {n}"),
    );
    assert_ne!(explain_text(&text).phase.failed_in, Phase::Profiling);
}

#[test]
fn the_profiling_check_far_above_a_later_failure_is_not_its_stage() {
    let check = "AssertionError: Error in memory profiling. Initial free memory 41.19 GiB, \
                 current free memory 41.64 GiB.\n";
    let text = far_above_a_later_failure(check.trim_end(), |n| {
        format!("INFO 01-02 10:00:00 [loggers.py:1] Engine 000: line {n}")
    });
    assert_ne!(explain_text(&text).phase.failed_in, Phase::Profiling);
}

/// A stage line, then 500 lines of another kind, then a failure of the caller's own code.
fn far_above_a_later_failure(stage_line: &str, filler: impl Fn(usize) -> String) -> String {
    let mut text = format!("{stage_line}\n");
    for n in 0..500 {
        text.push_str(&filler(n));
        text.push('\n');
    }
    text.push_str(
        "Traceback (most recent call last):\n  File \"/srv/app.py\", line 9, in <module>\n    \
         out = model.generate(prompts)\ntorch.OutOfMemoryError: CUDA out of memory. Tried to \
         allocate 2.00 GiB. GPU 0 has a total capacity of 79.19 GiB of which 1.00 GiB is free.\n",
    );
    text
}

#[test]
fn tabbys_placing_line_is_the_stage_until_the_model_is_loaded() {
    let oom = "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 112.00 MiB. GPU 0 \
               has a total capacity of 23.57 GiB of which 20.06 MiB is free.\n";
    let during = format!(
        "INFO:     Loading model: /models/acme-70b-exl2\nINFO:     Loading with autosplit\n{oom}"
    );
    assert_eq!(explain_text(&during).phase.failed_in, Phase::WeightsLoad);
    let after = format!(
        "INFO:     Loading with autosplit\nINFO:     Model successfully loaded.\n\
         INFO:     127.0.0.1:5000 - \"POST /v1/completions HTTP/1.1\" 200\n{oom}"
    );
    assert_ne!(explain_text(&after).phase.failed_in, Phase::WeightsLoad);
    // Far above a later failure of the caller's own code, it says nothing of that one.
    let text = far_above_a_later_failure("INFO:     Loading with autosplit", |n| {
        format!("INFO:     127.0.0.1:5000 - \"POST /v1/completions HTTP/1.1\" 200 {n}")
    });
    assert_ne!(explain_text(&text).phase.failed_in, Phase::WeightsLoad);
}

#[test]
fn forges_model_move_is_the_stage_until_it_has_taken_its_seconds() {
    let target = "[Memory Management] Target: KModel, Free GPU: 3000.00 MB, Model Require: \
                  9000.00 MB, Previously Loaded: 0.00 MB, Inference Require: 1024.00 MB, \
                  Remaining: -7024.00 MB, ";
    let oom = "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 90.00 MiB. GPU 0 \
               has a total capacity of 4.00 GiB of which 12.00 MiB is free.";
    // The error printed on the same console line, after the target.
    let during = format!("{target}{oom}\n");
    assert_eq!(explain_text(&during).phase.failed_in, Phase::WeightsLoad);
    let during = format!("{target}\n{oom}\n");
    assert_eq!(explain_text(&during).phase.failed_in, Phase::WeightsLoad);
    let after = format!(
        "{target}Moving model(s) has taken 1.20 seconds\n  0%|          | 0/20 [00:00<?, ?it/s]\n\
         {oom}\n"
    );
    assert_ne!(explain_text(&after).phase.failed_in, Phase::WeightsLoad);
    let text = far_above_a_later_failure(target, |n| format!("INFO: 127.0.0.1 GET /queue {n}"));
    assert_ne!(explain_text(&text).phase.failed_in, Phase::WeightsLoad);
}
