//! Session 36 (fix p1): a trained model tested (`tested`), and a logger's level word read only
//! as a word of its own (`is_log_output`).

use super::*;

fn one(text: &str) -> Option<Phase> {
    stage(&[ProseLine::new(1, text)]).map(|(phase, _)| phase)
}

fn marked(text: &str) -> bool {
    crate::parse::engine_log::parse_line_scan(text).stage_words
}

#[test]
fn a_model_tested_when_the_failure_came_is_inference() {
    for text in [
        "Why do I have this problem when I test：",
        "I get CUDA out of memory when I test, any idea?",
        "OOM while testing the trained model on my own images",
        "when testing on my images it runs out of memory",
        "CUDA out of memory when we test the model",
    ] {
        assert!(marked(text), "{text:?} is not marked");
        assert_eq!(one(text), Some(Phase::Inference), "{text:?}");
    }
}

#[test]
fn a_test_of_a_fix_or_a_setting_is_no_stage() {
    for text in [
        // The reporter's debugging: its object is a fix, a setting, the machine.
        "when I test it with batch size 1 it still runs out of memory",
        "when I tested the patch the OOM went away",
        "when testing the fix on a 3090 I still get OOM",
        // A test that went well.
        "when I test, it works fine",
    ] {
        assert_eq!(one(text), None, "{text:?}");
    }
}

#[test]
fn an_error_code_in_a_title_is_the_reporters_words() {
    assert_eq!(
        one("# CUDA_ERROR_OUT_OF_MEMORY on Tesla V100 while training"),
        Some(Phase::TrainingStep)
    );
    // A logger's level as a word of its own is still the program's line.
    assert_eq!(one("ERROR: CUDA out of memory while training"), None);
    assert_eq!(one("[INFO] OOM while training"), None);
}

#[test]
fn a_kernel_launched_is_no_app_starting() {
    assert_eq!(
        one(
            "RuntimeError: INTERNAL: Failed to launch CUDA kernel: fusion_29 with block dimensions"
        ),
        None
    );
    assert_eq!(
        one("CUDA out of memory when launching the server"),
        Some(Phase::Startup)
    );
}
