//! Darknet (pjreddie/darknet and its AlexeyAB fork, the YOLOv2–v4 trainers): the lines it
//! prints while it builds the network and the place its CUDA checks name (session 36).
//!
//! - `parse_network_cfg` (`src/parser.c`) prints the layer table's header (`layer     filters
//!   size              input                output`; AlexeyAB: `   layer   filters
//!   size/strd(dil)      input                output`), then for each layer its number
//!   (`fprintf(stderr, "%4d ", count)`) before `make_*_layer` allocates the layer's GPU buffers
//!   and prints its row (`0 conv     32  3 x 3 / 1   416 x 416 x   3   ->   416 x 416 x  32
//!   0.299 BFLOPs`). A failure under the table (`   3 CUDA Error: out of memory`) came while a
//!   layer was being allocated: the network built and its weights placed, weights_load.
//! - The training entry points (`train_detector`, `train_classifier`, … in `src/detector.c`,
//!   `src/classifier.c`) print `Learning Rate: %g, Momentum: %g, Decay: %g` once the network is
//!   built and its weights loaded, before the first iteration: the load had ended.
//! - Its CUDA checks (`check_error_extended`, `src/dark_cuda.c`: `CUDA status Error: file: %s:
//!   func: %s() line: %d`; older builds `CUDA status Error: file: ./src/darknet.c : () : line:
//!   470`) name the source file of the failing call. `src/darknet.c` holds only `main`, whose
//!   CUDA calls select the device (`cuda_set_device`, `cudaSetDeviceFlags`, lines 464–465 at
//!   59596d7) before any command runs: start-up.

use super::{rule, LineFacts, Rule};
use crate::model::explain::{EventFigures, EventKind, Phase};

pub(super) const RULES: &[Rule] = &[
    rule("filters", layer_table_header),
    rule("BFLOPs", layer_row),
    rule(" BF", layer_row),
    rule("Learning Rate: ", learning_rate),
    rule("status Error", status_error),
];

/// The layer table's header: `layer`, `filters`, `input`, `output` in that order and nothing
/// else of a sentence.
fn layer_table_header(text: &str, facts: &mut LineFacts) {
    let words: Vec<&str> = text.split_whitespace().collect();
    let header = matches!(
        words.as_slice(),
        ["layer", "filters", size, "input", "output"] if size.starts_with("size")
    );
    if header {
        facts.event(
            EventKind::WeightsLoadProgress,
            Phase::WeightsLoad,
            EventFigures::default(),
        );
    }
}

/// A row of the layer table: the layer's number, its kind, and `->` between the input's and
/// the output's shape, ending in its cost (`0.299 BFLOPs`, AlexeyAB `0.639 BF`).
fn layer_row(text: &str, facts: &mut LineFacts) {
    let mut words = text.split_whitespace();
    let numbered = words
        .next()
        .is_some_and(|word| !word.is_empty() && word.bytes().all(|b| b.is_ascii_digit()));
    let kind = words.next().is_some_and(|word| {
        matches!(
            word,
            "conv" | "max" | "avg" | "route" | "shortcut" | "upsample" | "yolo" | "Shortcut"
        )
    });
    let last = text.split_whitespace().next_back();
    let cost = matches!(last, Some("BFLOPs" | "BF"));
    if numbered && kind && cost && text.contains("->") {
        facts.event(
            EventKind::WeightsLoadProgress,
            Phase::WeightsLoad,
            EventFigures::default(),
        );
    }
}

/// `Learning Rate: 0.001, Momentum: 0.949, Decay: 0.0005`: the network built and loaded, the
/// training loop next.
fn learning_rate(text: &str, facts: &mut LineFacts) {
    let line = text.trim();
    let darknet = line.starts_with("Learning Rate: ")
        && line.contains(", Momentum: ")
        && line.contains(", Decay: ");
    if darknet {
        facts.event(
            EventKind::WeightsLoaded,
            Phase::WeightsLoad,
            EventFigures::default(),
        );
    }
}

/// `CUDA status Error: file: ./src/darknet.c : () : line: 470` (or `cuDNN status Error in:
/// file: …/darknet.c`): a CUDA call of darknet's `main`, start-up.
fn status_error(text: &str, facts: &mut LineFacts) {
    let Some((_, rest)) = text.split_once("status Error") else {
        return;
    };
    let Some((_, file)) = rest.split_once("file: ") else {
        return;
    };
    let file = file
        .split([' ', ':'])
        .next()
        .unwrap_or_default()
        .replace('\\', "/");
    if file == "darknet.c" || file.ends_with("/darknet.c") {
        facts.failed_phase_hint = Some(Phase::Startup);
    }
}
