use super::super::event_kinds as kinds;
use crate::model::explain::EventKind;

#[test]
fn booster_init_line_starts_the_training_loop() {
    assert_eq!(
        kinds("Booster init max CUDA memory: 3770.59 MB"),
        vec![EventKind::TrainingStep]
    );
    assert!(kinds("Booster init max CUDA memory: unknown").is_empty());
}
