//! Lines of the reporter's own words that may name the stage that failed: an issue title, a
//! sentence, a form field (`while training`, `Cannot load model`, `hires fix`, `训练过程中`).
//! Only marked here (`LineFacts::stage_words`); `analyze::phase::prose` reads the words, and
//! only when no traceback frame or log line decides the stage.

use super::{rule, LineFacts, Rule};

/// Stems of the words `analyze::phase::prose` looks for, as they are written (matching is
/// case-sensitive; AUTOMATIC1111's `hires fix` is marked by `engines`): English, Chinese,
/// Japanese, Korean, Spanish and Portuguese, and ComfyUI's sampler nodes (`KSampler`,
/// `SamplerCustomAdvanced`).
pub(super) const MARKERS: &[&str] = &[
    "training",
    "Training",
    "train ",
    "Train ",
    "fine-tun",
    "Fine-tun",
    "finetun",
    "Finetun",
    "load",
    "Load",
    "inferenc",
    "Inferenc",
    "generat",
    "Generat",
    "sampling",
    "Sampling",
    "igh-res fix",
    "训练",
    "微调",
    "推理",
    "加载",
    "生成",
    "学習",
    "推論",
    "読み込",
    "학습",
    "추론",
    "로드",
    "entrena",
    "treina",
    "inferên",
    "carga",
    "carreg",
    "Sampler",
];

pub(super) const RULES: &[Rule] = &[
    rule(MARKERS[0], stage_words),
    rule(MARKERS[1], stage_words),
    rule(MARKERS[2], stage_words),
    rule(MARKERS[3], stage_words),
    rule(MARKERS[4], stage_words),
    rule(MARKERS[5], stage_words),
    rule(MARKERS[6], stage_words),
    rule(MARKERS[7], stage_words),
    rule(MARKERS[8], stage_words),
    rule(MARKERS[9], stage_words),
    rule(MARKERS[10], stage_words),
    rule(MARKERS[11], stage_words),
    rule(MARKERS[12], stage_words),
    rule(MARKERS[13], stage_words),
    rule(MARKERS[14], stage_words),
    rule(MARKERS[15], stage_words),
    rule(MARKERS[16], stage_words),
    rule(MARKERS[17], stage_words),
    rule(MARKERS[18], stage_words),
    rule(MARKERS[19], stage_words),
    rule(MARKERS[20], stage_words),
    rule(MARKERS[21], stage_words),
    rule(MARKERS[22], stage_words),
    rule(MARKERS[23], stage_words),
    rule(MARKERS[24], stage_words),
    rule(MARKERS[25], stage_words),
    rule(MARKERS[26], stage_words),
    rule(MARKERS[27], stage_words),
    rule(MARKERS[28], stage_words),
    rule(MARKERS[29], stage_words),
    rule(MARKERS[30], stage_words),
    rule(MARKERS[31], stage_words),
    rule(MARKERS[32], stage_words),
    rule(MARKERS[33], stage_words),
];

fn stage_words(_text: &str, facts: &mut LineFacts) {
    facts.stage_words = true;
}
