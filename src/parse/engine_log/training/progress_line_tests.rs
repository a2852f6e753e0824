use super::super::parse_line_scan;
use crate::model::explain::EventKind;

fn steps(line: &str) -> bool {
    parse_line_scan(line)
        .events
        .iter()
        .any(|event| event.kind == EventKind::TrainingStep)
}

#[test]
fn detectron2_metrics_lines_are_steps() {
    assert!(steps(
        "[01/02 10:00:00 d2.utils.events]:  eta: 0:10:00  iter: 19  total_loss: 2.1  \
             loss_cls: 0.9  time: 0.4  lr: 0.0002  max_mem: 3000M"
    ));
    assert!(!steps(
        "[01/02 10:00:00 d2.utils.events]:  iter: 19  lr: 0.0002"
    ));
    assert!(!steps("max iter: 90000 (set in the config)"));
}

#[test]
fn json_training_records_are_steps() {
    assert!(steps(
        r#"{"lr": 0.001, "loss": 0.52, "epoch": 2, "iter": 40, "step": 40}"#
    ));
    assert!(steps(r#"{"train/loss": 1.25, "train/global_step": 300}"#));
    assert!(!steps(r#"{"eval_loss": 0.9, "step": 500}"#));
    assert!(!steps(r#"{"loss": 0.4, "accuracy": 0.9}"#));
    assert!(!steps(r#"{"loss": "mse", "epoch": 3}"#));
}

#[test]
fn the_trainers_wandb_start_warning_is_the_loop() {
    assert!(steps(
        "wandb: WARNING The `run_name` is currently set to the same value as \
             `TrainingArguments.output_dir`. If this was not intended, please specify a \
             different run name by setting the `TrainingArguments.run_name` parameter."
    ));
    assert!(!steps("wandb: WARNING Saving files without folders."));
}

#[test]
fn train_loss_metrics_are_steps() {
    assert!(steps(
        "episode/score 0.1 / train/loss/dyn 5.41 / train/loss/rep 2.2 / fps 30"
    ));
    assert!(steps("step 120 | train/loss/total: 0.52 | lr 1e-4"));
    assert!(!steps("logging train/loss/* and eval/loss/* to wandb"));
    assert!(!steps("eval/train/loss/total 0.5"));
}
