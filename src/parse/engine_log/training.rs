//! Lines that are not one serving engine's: Python tracebacks (frames decide the phase, R6),
//! transformers / accelerate / DeepSpeed / torchrun markers, training progress, and the
//! version lines of `python -m torch.utils.collect_env`, `transformers-cli env`, `pip freeze`
//! and `nvidia-smi`.

use super::common::{after, has, word_after};
use super::{rule, Certainty, LineFacts, Rule};
use crate::model::explain::{EventFigures, EventKind, Phase};
use crate::model::failure::EngineName;

pub(super) const RULES: &[Rule] = &[
    rule("Traceback (most recent call last)", traceback),
    rule("File \"", frame),
    rule("DeepSpeed info: version=", deepspeed),
    rule("[deepspeed]", deepspeed),
    rule("torch.distributed.elastic", torchrun),
    rule("'loss': ", training_step),
    rule("PyTorch version", versions),
    rule("Torch version", versions),
    rule("torch==", versions),
    rule("transformers==", versions),
    rule("vllm==", versions),
    rule("` version:", versions),
    rule("Driver Version:", versions),
    rule("CUDA Version:", versions),
    rule("CUDA used to build PyTorch:", versions),
];

fn traceback(_text: &str, facts: &mut LineFacts) {
    facts.event(
        EventKind::Traceback,
        Phase::Unknown,
        EventFigures::default(),
    );
}

/// `  File "/usr/lib/python3/dist-packages/vllm/worker/worker.py", line 123, in determine_num_available_blocks`.
fn frame(text: &str, facts: &mut LineFacts) {
    let Some(rest) = after(text, "File \"") else {
        return;
    };
    let Some(end) = rest.find('"') else {
        return;
    };
    let file = &rest[..end];
    let Some(function) = after(&rest[end..], ", in ") else {
        return;
    };
    let function = function.trim();
    if function.is_empty() || !rest[end..].contains(", line ") {
        return;
    }
    let engine = super::engines::engine_of_path(file);
    if let Some(engine) = engine {
        facts.engine(engine, Certainty::Weak);
    }
    facts.frame = Some((function.to_string(), file.to_string()));
}

fn deepspeed(text: &str, facts: &mut LineFacts) {
    facts.engine(EngineName::Deepspeed, Certainty::Strong);
    if let Some(version) = word_after(text, "DeepSpeed info: version=") {
        facts.engine_version = Some(version.to_string());
    }
}

fn torchrun(_text: &str, facts: &mut LineFacts) {
    facts.engine(EngineName::Pytorch, Certainty::Weak);
}

/// transformers `Trainer` log dicts: `{'loss': 1.2345, 'grad_norm': …, 'learning_rate': …, 'epoch': 0.1}`.
fn training_step(text: &str, facts: &mut LineFacts) {
    if has(text, "'epoch'") || has(text, "'learning_rate'") {
        facts.engine(EngineName::Transformers, Certainty::Weak);
        facts.event(
            EventKind::TrainingStep,
            Phase::TrainingStep,
            EventFigures::default(),
        );
    }
}

fn versions(text: &str, facts: &mut LineFacts) {
    let pairs: [(&str, &'static str); 10] = [
        ("PyTorch version (GPU?):", "torch"),
        ("PyTorch version:", "torch"),
        ("Torch version:", "torch"),
        ("torch==", "torch"),
        ("transformers==", "transformers"),
        ("`transformers` version:", "transformers"),
        ("vllm==", "vllm"),
        ("CUDA used to build PyTorch:", "cuda (torch build)"),
        ("Driver Version:", "nvidia driver"),
        ("CUDA Version:", "cuda (driver)"),
    ];
    for (key, name) in pairs {
        if let Some(version) = word_after(text, key) {
            let known = facts.versions.iter().any(|(existing, _)| *existing == name);
            if !known && version.chars().next().is_some_and(|c| c.is_ascii_digit()) {
                facts.versions.push((name, version.to_string()));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::parse_line_scan;

    #[test]
    fn frames_and_versions() {
        let facts = parse_line_scan("  File \"/usr/local/lib/python3.10/dist-packages/vllm/worker/model_runner.py\", line 1432, in capture_model");
        assert_eq!(
            facts.frame.as_ref().map(|f| f.0.as_str()),
            Some("capture_model")
        );
        let facts = parse_line_scan(
            "| NVIDIA-SMI 535.104.05   Driver Version: 535.104.05   CUDA Version: 12.2     |",
        );
        assert_eq!(
            facts.versions,
            vec![
                ("nvidia driver", "535.104.05".to_string()),
                ("cuda (driver)", "12.2".to_string())
            ]
        );
        let facts = parse_line_scan("PyTorch version: 2.3.0+cu121");
        assert_eq!(facts.versions, vec![("torch", "2.3.0+cu121".to_string())]);
    }
}
