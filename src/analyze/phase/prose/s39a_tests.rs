//! Session 39 (helper a): a later run of the same work (`grammar::later_run`).

use super::*;

fn one(text: &str) -> Option<Phase> {
    stage(&[ProseLine::new(1, text)]).map(|(phase, _)| phase)
}

fn marked(text: &str) -> bool {
    crate::parse::engine_log::parse_line_scan(text).stage_words
}

#[test]
fn a_later_run_of_the_work_is_inference() {
    for text in [
        "The first image came out fine, but the second generation runs out of memory.",
        "any subsequent generation will run out of memory",
        "After the first generation is successful, torch.OutOfMemoryError: CUDA out of memory.",
        "after doing a few generations, the process stops and an error appears",
        "the app fails after some images with CUDA error: out of memory",
        "The next request crashes the server with an OOM",
        "Another image in the queue and it throws CUDA out of memory",
    ] {
        assert!(marked(text), "{text:?} is not marked");
        assert_eq!(one(text), Some(Phase::Inference), "{text:?}");
    }
}

#[test]
fn a_first_run_a_product_or_a_screenshot_is_no_later_run() {
    for text in [
        // The first run also loads the model.
        "The first generation OOMs anyway.",
        // A product's generation.
        "It runs out of memory on my second generation Ryzen laptop.",
        // A sentence that names a load or a training.
        "After the first generation the second model fails to load with OOM.",
        "The second image batch of the training epoch crashes with OOM.",
        // No failure in the sentence.
        "I set FREE GPU MEMORY AFTER EACH GENERATION and reduced the cache.",
        // Advice.
        "If you run the next generation with a smaller size it will not OOM.",
    ] {
        assert_eq!(one(text), None, "{text:?}");
    }
}
