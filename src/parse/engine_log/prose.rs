//! Lines of the reporter's own words that may name the stage that failed: an issue title, a
//! sentence, a form field (`while training`, `Cannot load model`, `hires fix`, `训练过程中`).
//! Only marked here (`LineFacts::stage_words`); `analyze::phase::prose` reads the words, and
//! only when no traceback frame or log line decides the stage.

use super::{rule, LineFacts, Rule};

/// Pieces of the phrases `analyze::phase::prose` looks for, as they are written (matching is
/// case-sensitive, so a phrase's first letter is left out or both cases are listed;
/// AUTOMATIC1111's `hires fix` is marked by `engines`): English, Chinese, Japanese, Korean,
/// Spanish and Portuguese, and ComfyUI's sampler nodes. Phrases, not bare words: a serving log
/// repeats `load`, `generation throughput` and `SamplingParams` on every line, and a marker makes
/// each line it is on worth parsing.
pub(super) const MARKERS: &[&str] = &[
    "training",
    "Training",
    "to train",
    "train step",
    "fine-tun",
    "Fine-tun",
    "finetun",
    "Finetun",
    "oading the",
    "oading model",
    "oading a ",
    "oad the model",
    "oad model",
    "oad a model",
    "oading checkpoint",
    "oading weights",
    "t load",
    "unable to load",
    "Unable to load",
    "odel loading",
    "inferenc",
    "Inferenc",
    "ing generation",
    "e generation",
    "generating",
    "Generating",
    "generate an image",
    "ing Sampling",
    "igh-res fix",
    "KSampler",
    "SamplerCustom",
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
    // Phrases added for the blind batch of issue 13 (`analyze::phase::prose`).
    "t generation",
    "AE decod",
    "ae decod",
    // Pieces of whole phrases, not the bare words: `prefill`, `decoding`, `epoch`, `startup`
    // and `backward` stand in serving and training logs' every other line (`chunked_prefill`,
    // `guided_decoding`, `Epoch 3:`, `loss.backward()`), and a marker makes each line it is on
    // worth parsing (on a 1 GiB serving log the bare words cost explain a fifth of its time).
    "g prefill",
    "e prefill",
    "t prefill",
    "running the model",
    "eight loading",
    "eights loading",
    "ackward pass",
    "g backward",
    "t epoch",
    "d epoch",
    "h epoch",
    "n epoch",
    "g decoding",
    "n upscaling",
    "g upscaling",
    "e upscaling",
    "t startup",
    "n startup",
    "g startup",
    "to start",
    "graph capture",
    "apturing cuda",
    "apturing CUDA",
    "apturing Cuda",
    "g evaluation",
    "g validation",
    "e evaluating",
    "n evaluating",
    "评估",
    "评测",
    // The grammar of `analyze::phase::prose` (a stage verb in a clause, a training's progress)
    // and the other languages' words: `while decoding`, `when I train`, `clicked to generate`,
    // `trying to load deepseek`, `after 120 steps`, `reached 22000 iterations`, `at epoch 3`.
    "e decoding",
    " train ",
    "I train",
    "o generate",
    "I generate",
    "o load",
    "I load",
    "e loading",
    "g loading",
    "n loading",
    "s loading",
    " steps",
    " iterations",
    "first iteration",
    "few iterations",
    "t step ",
    "e sampling",
    "ing sampling",
    "ranscrib",
    "e predicting",
    "обучени",
    "тренировк",
    "инференс",
    "генерац",
    "агрузк",
    "ntrenando",
    "reinando",
    "erando",
    "argar",
    "argando",
    "l generar",
    "arregar",
    "arregando",
    "Train step",
    "o generation",
    "Generate",
    "ksampler",
    "Ksampler",
    "amplercustom",
    "测试",
    "验证时",
    "载入",
    "로딩",
    "ファインチューニング",
    "微調整",
    "ロード",
    "훈련",
    "파인튜닝",
    "생성",
];

/// One rule per marker, all with the same handler.
pub(super) const RULES: &[Rule] = &{
    const ANY: Rule = rule("", stage_words);
    let mut rules = [ANY; MARKERS.len()];
    let mut index = 0;
    while index < MARKERS.len() {
        rules[index] = rule(MARKERS[index], stage_words);
        index += 1;
    }
    rules
};

fn stage_words(_text: &str, facts: &mut LineFacts) {
    facts.stage_words = true;
}
