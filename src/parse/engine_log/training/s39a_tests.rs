//! Session 39 (helper a): the `Train Epoch: N [` batch line, faster-whisper's transcription line.

use super::super::parse_line_scan;
use crate::model::explain::EventKind;

fn kinds(line: &str) -> Vec<EventKind> {
    parse_line_scan(line)
        .events
        .iter()
        .map(|event| event.kind)
        .collect()
}

#[test]
fn a_train_epoch_batch_line_is_a_step() {
    for line in [
        "INFO:short_trian:Train Epoch: 1 [0%]",
        "Train Epoch: 3 [12800/60000 (21%)]\tLoss: 0.231",
        "2024-01-02 10:00:00 | INFO | train | Train Epoch: 12 [45%]",
    ] {
        assert!(kinds(line).contains(&EventKind::TrainingStep), "{line}");
    }
    for line in [
        // An epoch announced, no batch.
        "Train Epoch: 3 started",
        "Train Epoch: [3/10]",
    ] {
        assert!(!kinds(line).contains(&EventKind::TrainingStep), "{line}");
    }
}

#[test]
fn faster_whispers_transcription_line_is_a_request() {
    assert!(
        kinds("INFO:faster_whisper:Processing audio with duration 00:02.368")
            .contains(&EventKind::Request)
    );
    assert!(
        !kinds("Processing audio with duration limits from the config")
            .contains(&EventKind::Request)
    );
}
