//! Image apps and vision toolboxes named by their own lines: Fooocus's progress, parameter and
//! timing lines, Ultralytics' banner, AutoBatch, training table and `yolo` command,
//! Detectron2's `d2.` loggers and environment table, OpenMMLab's loggers and environment table.

use super::super::common::{has, word_after};
use super::super::{Certainty, LineFacts};
use super::named_as_word;
use crate::model::explain::Phase;
use crate::model::failure::EngineName;

pub(super) fn fooocus_own(_text: &str, facts: &mut LineFacts) {
    facts.engine(EngineName::Fooocus, Certainty::Strong);
}

/// `Total time: 11.47 seconds` alone on its line (two decimals, as Fooocus formats it).
pub(super) fn fooocus_total_time(text: &str, facts: &mut LineFacts) {
    let figure = text
        .trim()
        .strip_prefix("Total time: ")
        .and_then(|rest| rest.strip_suffix(" seconds"))
        .and_then(|figure| figure.split_once('.'));
    let fooocus = figure.is_some_and(|(whole, cents)| {
        !whole.is_empty()
            && whole.bytes().all(|b| b.is_ascii_digit())
            && cents.len() == 2
            && cents.bytes().all(|b| b.is_ascii_digit())
    });
    if fooocus {
        facts.engine(EngineName::Fooocus, Certainty::Weak);
    }
}

pub(super) fn fooocus_named(text: &str, facts: &mut LineFacts) {
    if named_as_word(text, "Fooocus") {
        facts.engine(EngineName::Fooocus, Certainty::Weak);
    }
}

pub(super) fn ultralytics_banner(text: &str, facts: &mut LineFacts) {
    // "Ultralytics 8.3.0 🚀 Python-…" or "Ultralytics YOLOv8.0.57 🚀 Python-…": a version and
    // the Python/torch versions after it; "Ultralytics package" in prose is not the banner.
    let Some(word) = word_after(text, "Ultralytics ") else {
        return;
    };
    let version = word.strip_prefix("YOLOv").unwrap_or(word);
    let versioned = version.starts_with(|c: char| c.is_ascii_digit()) && version.contains('.');
    if versioned && (has(text, "Python-") || has(text, "torch-")) {
        facts.engine(EngineName::Ultralytics, Certainty::Banner);
        facts.engine_version = Some(version.to_string());
    }
}

pub(super) fn ultralytics_own(text: &str, facts: &mut LineFacts) {
    if text.trim_start().starts_with("AutoBatch: ") {
        facts.engine(EngineName::Ultralytics, Certainty::Strong);
    }
}

pub(super) fn detectron2_own(text: &str, facts: &mut LineFacts) {
    // The logger name stands after the time, before `]`: ` d2.engine.train_loop]:`.
    let named = text.match_indices("d2.").any(|(at, _)| {
        let before = text[..at].chars().next_back();
        let rest = &text[at..];
        before.is_none_or(|c| c == ' ' || c == '[')
            && rest
                .find(|c: char| !(c.is_ascii_alphanumeric() || c == '.' || c == '_'))
                .is_some_and(|end| rest[end..].starts_with(']'))
    });
    if named {
        facts.engine(EngineName::Detectron2, Certainty::Strong);
        // `engine/hooks.py` `IterationTimer.after_train` logs "Total training time: …" when the
        // training loop ends, also on an exception (`TrainerBase.train`'s `finally` runs
        // `after_train`): printed under a failure, the failure ended the training.
        if has(text, "]: Total training time: ") {
            facts.late_phase = Some(Phase::TrainingStep);
        }
    }
}

pub(super) fn openmmlab_logger(text: &str, facts: &mut LineFacts) {
    // `<time> - <logger> - <LEVEL> - `: the logger is an OpenMMLab package.
    const LOGGERS: [&str; 12] = [
        "mmengine",
        "mmdet",
        "mmseg",
        "mmcv",
        "mmpose",
        "mmocr",
        "mmcls",
        "mmpretrain",
        "mmaction",
        "mmrotate",
        "mmyolo",
        "mmdet3d",
    ];
    let named = text
        .split(" - ")
        .skip(1)
        .any(|part| LOGGERS.contains(&part))
        && ["INFO", "WARNING", "ERROR", "DEBUG", "CRITICAL"]
            .iter()
            .any(|level| has(text, &format!(" - {level} - ")));
    if named {
        facts.engine(EngineName::Openmmlab, Certainty::Strong);
    }
}

pub(super) fn fooocus_parameters(text: &str, facts: &mut LineFacts) {
    const KEYS: [&str; 5] = ["Adaptive CFG", "Sharpness", "Seed", "CFG", "ADM Scale"];
    let Some(rest) = text.split("[Parameters] ").nth(1) else {
        return;
    };
    if KEYS
        .iter()
        .any(|key| rest.starts_with(&format!("{key} = ")))
    {
        facts.engine(EngineName::Fooocus, Certainty::Strong);
    }
}

pub(super) fn ultralytics_table(text: &str, facts: &mut LineFacts) {
    // The training table's header, or the validation bar's (`detect/val.py` `get_desc`).
    let training = has(text, "Epoch") && has(text, "box_loss") && has(text, "dfl_loss");
    let validation = has(text, "Instances") && has(text, "Box(P") && has(text, "mAP50");
    if training || validation {
        facts.engine(EngineName::Ultralytics, Certainty::Strong);
    }
}

pub(super) fn ultralytics_cli(text: &str, facts: &mut LineFacts) {
    // `yolo <task|mode> … key=value`: the command of the `yolo` console script.
    const WORDS: [&str; 11] = [
        "train",
        "val",
        "predict",
        "export",
        "track",
        "benchmark",
        "detect",
        "segment",
        "classify",
        "pose",
        "obb",
    ];
    let command = text.match_indices("yolo ").any(|(at, _)| {
        let before = text[..at].chars().next_back();
        let mut words = text[at + "yolo ".len()..].split_whitespace();
        let first = words.next().unwrap_or("");
        before.is_none_or(|c| c.is_whitespace() || matches!(c, '$' | '!' | '`' | '>'))
            && (WORDS.contains(&first) || first.starts_with("task=") || first.starts_with("mode="))
            && text[at..].contains('=')
    });
    if command {
        facts.engine(EngineName::Ultralytics, Certainty::Weak);
    }
}

pub(super) fn detectron2_env(text: &str, facts: &mut LineFacts) {
    let line = text.trim_start();
    let Some(rest) = line.strip_prefix("detectron2 ") else {
        return;
    };
    let mut words = rest.split_whitespace();
    let version = words.next().unwrap_or("");
    if version.starts_with(|c: char| c.is_ascii_digit())
        && words.next().is_some_and(|w| w.starts_with('@'))
    {
        facts.engine(EngineName::Detectron2, Certainty::Strong);
        facts.engine_version = Some(version.to_string());
    }
}

/// The keys of OpenMMLab's environment tables: MMEngine's and MMCV's `collect_env`, and each
/// toolbox's own line (`mmdet/utils/collect_env.py` "MMDetection", `mmseg` "MMSegmentation",
/// `mmpose` "MMPose", `mmpretrain` "MMPretrain", `mmcls` "MMClassification", `mmocr` "MMOCR",
/// `mmrotate` "MMRotate", `mmaction` "MMAction2", `mmdet3d` "MMDetection3D", `mmyolo` "MMYOLO",
/// `mmagic` "MMagic", `mmedit` "MMEditing"), each a `rule` marker above.
const OPENMMLAB_ENV_KEYS: &[&str] = &[
    "MMEngine: ",
    "MMCV: ",
    "MMDetection: ",
    "MMSegmentation: ",
    "MMPose: ",
    "MMPretrain: ",
    "MMClassification: ",
    "MMOCR: ",
    "MMRotate: ",
    "MMAction2: ",
    "MMDetection3D: ",
    "MMYOLO: ",
    "MMagic: ",
    "MMEditing: ",
];

pub(super) fn openmmlab_env(text: &str, facts: &mut LineFacts) {
    let line = text.trim_start();
    let version = OPENMMLAB_ENV_KEYS
        .iter()
        .find_map(|key| line.strip_prefix(key))
        .and_then(|rest| rest.split_whitespace().next())
        .filter(|word| word.starts_with(|c: char| c.is_ascii_digit()));
    if version.is_some() {
        facts.engine(EngineName::Openmmlab, Certainty::Strong);
    }
}
