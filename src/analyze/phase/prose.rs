//! The stage that failed, in the reporter's own words: an issue title (`OOM while training
//! Llama`), a sentence (`I get an OOM when loading the model`, `it fails with hires fix`), an
//! issue form's field (`Component: Training`), in English and the other languages of issue
//! threads (`训练过程中`, `推論時`, `학습 중`, `durante el entrenamiento`).
//!
//! Used only when no traceback frame or log line decides the stage ([`fill_unknown`]): the
//! reporter may be wrong, the log may not. Words that deny or move the stage are not read as
//! it: a negation (`no OOM during training`), `after training`, `before
//! loading`, Chinese `训练结束之后` (after training ended). When the words name several stages,
//! the one in the same sentence as the out-of-memory words decides; otherwise nothing does.

use crate::model::explain::{Phase, PhaseReport};

mod cjk;
mod code;
mod deny;
mod first_cuda;
mod grammar;
mod job;
mod loads;
mod phrases;
mod tested;

use code::*;
use deny::*;

use cjk::{
    cjk_apply_hits, cjk_before_training_hits, cjk_question_hits, cjk_ran_for_a_while,
    cjk_run_evaluation_hits, cjk_run_sampling_hits, cjk_startup_hits, mixed_script_hits,
};
use loads::{named_model_load, named_model_load_english};
use phrases::{APPLY_PHRASES, PHRASES};

/// Words of a hit that name a stage run from inside another (an evaluation pass or a checkpoint
/// save inside a training loop): in one sentence with the outer stage, the inner one decides
/// (`exit code 137 in validation step while training`, `when saving a checkpoint during
/// training`).
const INNER: &[&str] = &[
    "validat",
    "evaluat",
    "eval ",
    "eval过",
    "eval阶",
    "eval的",
    "val的时候",
    "验证",
    "评估",
    "sav",
    "保存",
];

/// Characters just before a CJK phrase that make it another word: `预训练` (pre-trained, as in
/// `加载预训练模型`, loading the pre-trained model).
const BEFORE_CJK: &[&str] = &["预", "預"];

/// Words just before a phrase that deny it or put the failure outside the stage.
const DENY: &[&str] = &[
    "не",
    "после",
    "después",
    "sin",
    "depois",
    "sem",
    "no",
    "not",
    "never",
    "without",
    "don't",
    "doesn't",
    "didn't",
    "isn't",
    "wasn't",
    "after",
    "before",
    "finished",
    "done",
    "finish",
    "finishes",
    "finishing",
    "completes",
    "completed",
    // What was expected, not what happened (`Should start training without OOM`).
    "should",
    // What the run could do before, not where it failed (`Two days ago i could load a model in
    // exl2 at 36,000 tokens`, `I was able to generate`). (Not `can`: `I can run inference but
    // then I get back a black image and this error` names the stage that failed.)
    "could",
    "able",
    "expected",
    "supposed",
    // A hypothetical (`- If during training, check the number of Gaussians`, `if you load the
    // model in 8 bits`): advice, not this failure (session 16, rule 2).
    "if",
];

/// Words after a phrase, before the out-of-memory words, that put the failure after the stage
/// named (`it finishes loading the model, but then it throws an OOM`).
const THEN: &[&str] = &["but then", "and then", "but after", "only after"];

/// Characters after a CJK phrase that put the failure after the stage (`训练结束之后`,
/// `训练完`, `训练后`).
/// `训练好的模型` (a trained model) and `学習済み` (trained) name a model, not a stage.
const AFTER_CJK: &[&str] = &[
    "结束",
    "完",
    "后",
    "之後",
    "終了",
    "後",
    "好的",
    "済",
    "된 모델",
    // The resultative complement: `训练出来的模型`, `这样训练出来部署` (what the training
    // produced), a training that ended.
    "出来",
];

/// Characters right after a CJK phrase that put the failure before the stage (`训练之前`,
/// `训练前`, `学習前`, `학습 전에`).
const BEFORE_STAGE_CJK: &[&str] = &["之前", "以前", "前", "の前", " 전에", "전에"];

/// Words of a line that name the failure itself.
const OOM_WORDS: &[&str] = &["oom", "out of memory", "outofmemory", "显存", "メモリ不足"];

/// Whether a lowercase text names the failure (an [`OOM_WORDS`] word) other than to deny it:
/// `without OOM`, `no OOM`, Korean `OOM 없이` (without OOM), Chinese `没有OOM`, Japanese
/// `メモリ不足なく` say the run went through.
fn names_the_failure(lower: &str) -> bool {
    const BEFORE: &[&str] = &[
        "without ", "no ", "not ", "never ", "没有", "没", "不会", "无",
    ];
    const AFTER: &[&str] = &["없이", "없", "なし", "なく", "が出ない", "出ない"];
    OOM_WORDS.iter().any(|word| {
        lower.match_indices(word).any(|(at, _)| {
            let before = &lower[..at];
            let after = lower[at + word.len()..].trim_start();
            !BEFORE.iter().any(|deny| before.ends_with(deny))
                && !AFTER.iter().any(|deny| after.starts_with(deny))
        })
    })
}

/// A CJK training word that names the job, not the moment it failed (the corpus convention:
/// `跑检测模型的训练`, running the detector's training, is the job; `训练时`, `训练过程中`,
/// `学習中`, `학습하던 중` are the moment): a noun it modifies follows (`训练代码`, the training
/// code; `学習データ`; `학습 예제`, a training example), or, with no word of time after it (`时`,
/// `的时候`, `过程中`, `中`, `時`, `중`, `할 때`), no `开始` (start) beside it and no failure (`报错`,
/// `显存`, `에러`) in its sentence, it is written as a thing named (see the forms below).
fn cjk_job_word(lower: &str, at: usize, phrase: &str) -> bool {
    if phrase.is_ascii() {
        return false;
    }
    const NOUNS: &[&str] = &[
        "代码",
        "脚本",
        "数据",
        "集",
        "参数",
        "配置",
        "文件",
        "程序",
        "命令",
        "日志",
        "环境",
        "机器",
        "样本",
        "任务",
        "教程",
        "示例",
        "例子",
        "コード",
        "スクリプト",
        "データ",
        "用",
        "設定",
        " 데이터",
        "데이터",
        " 코드",
        " 예제",
        "예제",
        " 스크립트",
        " 목적",
        "용",
        " 환경",
        " 설정",
    ];
    const TIME_NEXT: &[&str] = &[
        "中",
        "时",
        "時",
        "过程",
        "過程",
        "期间",
        "期間",
        "阶段",
        "階段",
        "途中",
        "の際",
        "開始",
        "开始",
        "到",
        "하는데",
        "하는 중",
        "하던 중",
        " 중",
        "중",
        "할 때",
        "하다가",
        "시",
        " 도중",
        "도중",
        " 과정",
        "과정",
    ];
    const TIME_CLAUSE: &[&str] = &["时", "時", "的时候", "过程中", "期间", "阶段", "的時候"];
    const FAILS: &[&str] = &[
        "报错",
        "報錯",
        "错误",
        "錯誤",
        "出错",
        "异常",
        "崩溃",
        "溢出",
        "爆",
        "不足",
        "不够",
        "失败",
        "エラー",
        "落ち",
        "에러",
        "오류",
        "실패",
        "error",
        "killed",
        "crash",
        "fail",
    ];
    let after = &lower[at + phrase.len()..];
    if NOUNS.iter().any(|noun| after.starts_with(noun)) {
        return true;
    }
    if TIME_NEXT.iter().any(|word| after.starts_with(word))
        || ["开始", "開始"]
            .iter()
            .any(|word| lower[..at].ends_with(word))
    {
        return false;
    }
    const STOPS: [char; 7] = ['。', '！', '？', '!', '?', '\n', '；'];
    let clause_end = after
        .find(|c: char| STOPS.contains(&c) || c == '，' || c == ',')
        .unwrap_or(after.len());
    if TIME_CLAUSE
        .iter()
        .any(|word| after[..clause_end].contains(word))
    {
        return false;
    }
    let start = lower[..at].rfind(STOPS).map_or(0, |stop| {
        stop + lower[stop..].chars().next().map_or(1, char::len_utf8)
    });
    let end = after
        .find(STOPS)
        .map_or(lower.len(), |stop| at + phrase.len() + stop);
    let sentence = &lower[start..end];
    if names_the_failure(sentence) || FAILS.iter().any(|word| sentence.contains(word)) {
        return false;
    }
    // The forms that make it a thing named, not a time: `X的训练` / `Xの学習` (the training of
    // X), `终止训练` (the training stopped), `学習を続行` / `학습을 진행` (the training as the
    // object of a verb), Korean `…하는 예제` (an example that does it).
    let before = lower[..at].trim_end();
    let adnominal = after
        .strip_prefix("](")
        .and_then(|link| link.split_once(')'))
        .map_or(after, |(_, rest)| rest);
    ["的", "の", "终止", "停止", "结束", "中止"]
        .iter()
        .any(|word| before.ends_with(word))
        || ["を", "을", "를", " 을", " 를"]
            .iter()
            .any(|marker| after.starts_with(marker))
        || adnominal.strip_prefix("하는").is_some_and(|rest| {
            NOUNS
                .iter()
                .any(|noun| rest.starts_with(noun) && noun.starts_with(' '))
        })
}

/// A title that is the training's noun and the failure alone (`Training OOM`, `finetuning -
/// Out of Memory Error`): the training named with no set-up (AUDIT.md, session 15, rule 2b).
/// An issue's title as a markdown heading may also name what was trained (`# Training Hindi
/// TTS`, `# Fine-tuning Llama-3 8B OOM`): the training named with no set-up still (a set-up
/// in it, `# Training on 8xA100 with DeepSpeed`, makes it the job, as `job` decides), unless
/// another stage or the training's surroundings are named in it (`# Training data loading
/// OOM`, `# Training script fails at checkpoint save`).
fn training_titled(lower: &str) -> Option<(usize, usize, Phase)> {
    // (A post-training, a pre-training: the same steps, session 47.)
    const NOUNS: &[&str] = &[
        "training",
        "finetuning",
        "fine-tuning",
        "fine tuning",
        "posttraining",
        "post-training",
        "pretraining",
        "pre-training",
    ];
    const FAILURE: &[&str] = &[
        "oom", "cuda", "gpu", "out", "of", "memory", "error", "errors", "issue", "-", ":",
    ];
    // Words of a heading that name something other than the training's steps.
    const ELSEWHERE: &[&str] = &[
        "data",
        "dataset",
        "datasets",
        "dataloader",
        "loader",
        "loading",
        "load",
        "loads",
        "saving",
        "save",
        "saves",
        "checkpoint",
        "checkpoints",
        "resume",
        "resuming",
        "eval",
        "evaluation",
        "validation",
        "inference",
        "predict",
        "prediction",
        "generate",
        "generation",
        "export",
        "exporting",
        "convert",
        "conversion",
        "merge",
        "merging",
        "quantize",
        "quantization",
        "start",
        "startup",
        "init",
        "initialization",
        "launch",
        "script",
        "scripts",
        "code",
        "config",
        "example",
        "examples",
        "tutorial",
        "docs",
        "documentation",
        "speed",
        "slow",
        "time",
        "loss",
        "nan",
        "accuracy",
        "results",
        "question",
        "help",
        "support",
        "feature",
        "request",
        "completed",
        "finished",
        "done",
        "after",
        "before",
        "without",
        "instead",
        "vs",
        "or",
    ];
    let trimmed = lower.trim();
    let heading = trimmed
        .strip_prefix('#')
        .map(|title| title.trim_start_matches('#').trim_start());
    let text = heading.unwrap_or(trimmed);
    // A heading that ends with the training and its failure (`# reward model train OOM`, `#
    // Qwen2-7B SFT OOM`, `# LoRA finetune oom`): what OOMs is the training, unless the heading
    // names another stage or the training's surroundings.
    if let Some(title) = heading {
        let words: Vec<&str> = title
            .split(|c: char| c.is_whitespace() || matches!(c, ',' | '.' | '!' | '?' | '(' | ')'))
            .filter(|word| !word.is_empty())
            .collect();
        let ends = words.len() >= 2
            && words[words.len() - 1] == "oom"
            && matches!(
                words[words.len() - 2],
                "train" | "training" | "sft" | "finetune" | "finetuning" | "fine-tuning"
            );
        if ends && !words.iter().any(|word| ELSEWHERE.contains(word)) {
            let at = lower.len() - lower.trim_start().len();
            return Some((at, lower.len(), Phase::TrainingStep));
        }
    }
    let noun = NOUNS.iter().find(|noun| text.starts_with(*noun))?;
    let rest = &text[noun.len()..];
    if rest.starts_with(|c: char| c.is_alphanumeric()) {
        return None;
    }
    let words: Vec<&str> = rest
        .split(|c: char| c.is_whitespace() || matches!(c, ',' | '.' | '!' | '?' | '(' | ')'))
        .filter(|word| !word.is_empty())
        .collect();
    let failure = words.iter().any(|word| *word == "oom" || *word == "memory");
    let failure_alone = failure && words.iter().all(|word| FAILURE.contains(word));
    let subject_titled = heading.is_some()
        && !words.is_empty()
        && words.len() <= 6
        && !words.iter().any(|word| ELSEWHERE.contains(word));
    (failure_alone || subject_titled).then(|| {
        let at = lower.len() - lower.trim_start().len();
        let at = at + lower[at..].find(*noun).unwrap_or(0);
        (at, lower.len(), Phase::TrainingStep)
    })
}

/// A model moved onto the GPU in the reporter's words (`when moving the models to the graphics
/// card`, `OOM when moving the model to GPU`, `transferring my model to cuda`): its weights
/// placed, as `Module.to`'s frame is read; not a model moved off it (`to the CPU`).
fn model_moved_to_the_gpu(lower: &str) -> Option<(usize, usize, Phase)> {
    const VERBS: &[&str] = &[
        "move",
        "moves",
        "moved",
        "moving",
        "transfer",
        "transfers",
        "transferred",
        "transferring",
        "send",
        "sends",
        "sending",
        "sent",
    ];
    let words: Vec<(usize, &str)> = lower
        .split_terminator(|c: char| !(c.is_alphanumeric() || c == '-' || c == '_'))
        .scan(0, |offset, word| {
            let at = *offset;
            *offset += word.len() + 1;
            Some((at, word))
        })
        .filter(|(_, word)| !word.is_empty())
        .collect();
    (0..words.len()).find_map(|index| {
        let (start, verb) = words[index];
        if !VERBS.contains(&verb) {
            return None;
        }
        let mut next = index + 1;
        while words
            .get(next)
            .is_some_and(|(_, w)| matches!(*w, "the" | "my" | "our" | "all"))
        {
            next += 1;
        }
        let (_, noun) = words.get(next)?;
        let (_, to) = words.get(next + 1)?;
        if !matches!(*noun, "model" | "models") || !matches!(*to, "to" | "onto") {
            return None;
        }
        let mut target = next + 2;
        if words.get(target).is_some_and(|(_, w)| *w == "the") {
            target += 1;
        }
        let (at, place) = *words.get(target)?;
        let second = words.get(target + 1).map(|(_, w)| *w);
        let gpu = matches!(place, "gpu" | "gpus" | "cuda" | "device" | "vram")
            || (matches!(place, "graphics" | "video") && second == Some("card"));
        gpu.then_some((start, at + place.len(), Phase::WeightsLoad))
    })
}

/// An evaluation's or a prediction's script that the reporter says they ran (`Run python
/// eval.py --config …`, `running predict.py on my images`): the job of applying a model, as
/// `phase::inference` reads the shell line that runs it (`inference::inference_script`; here
/// only `eval*.py`, `evaluate*.py`, `test*.py`, `predict*.py`, `infer*.py`, `*_infer.py`,
/// `*_predict.py`, not a pytest module
/// nor a name with a training word). It decides only when no other words name a stage, and the
/// bare progress words beside it (`after 13 iterations`) are the evaluation's.
fn script_hits(lower: &str) -> Vec<(usize, usize, Phase)> {
    const RUNS: &[&str] = &[
        "python",
        "python3",
        "run",
        "running",
        "ran",
        "runs",
        "execute",
        "executing",
        // (`when using quantize.py to quantize …`, `when do convert_checkpoint.py`.)
        "using",
        "do",
        "doing",
        "使用",
        "运行",
        "执行",
        "跑",
        "用",
    ];
    let mut out = Vec::new();
    for (dot, _) in lower.match_indices(".py") {
        let end = dot + 3;
        if lower[end..]
            .chars()
            .next()
            .is_some_and(|c| c.is_alphanumeric() || c == '_')
        {
            continue;
        }
        let start = lower[..dot]
            .char_indices()
            .rev()
            .find(|&(_, c)| {
                !(c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.' | '/' | '\\'))
            })
            .map_or(0, |(i, c)| i + c.len_utf8());
        let file = &lower[start..end];
        // An evaluation's or a prediction's script by its first word (`eval.py`,
        // `test_net.py` is a pytest name and refused below, `predict_video.py`); not a demo's
        // or a generation's (`web_demo.py`, `demo_img2vid.py` load or build their model first,
        // and fail there as often), nor `run_sft_and_eval.py` (a training job's last stage).
        let stem = file.rsplit(['/', '\\']).next().unwrap_or_default();
        let first = stem
            .split(|c: char| !c.is_ascii_alphabetic())
            .next()
            .unwrap_or_default();
        let evaluates = matches!(
            first,
            "eval"
                | "evaluate"
                | "evaluation"
                | "test"
                | "predict"
                | "prediction"
                // (LongBench's and other benchmarks' `pred.py`; session 45.)
                | "pred"
                | "infer"
                | "inference"
                | "detect"
                | "render"
        );
        // Or by its last word when that word is the model applied (`ssd_infer.py`,
        // `batch_predict.py`): an evaluation's last word is often a training job's last
        // stage (`run_sft_and_eval.py`), so only these.
        let last = stem
            .trim_end_matches(".py")
            .rsplit(|c: char| !c.is_ascii_alphabetic())
            .find(|word| !word.is_empty())
            .unwrap_or_default();
        let applies = matches!(last, "infer" | "inference" | "predict" | "prediction");
        // A checkpoint converter (`convert_checkpoint.py` of TensorRT-LLM's examples and of
        // lit-llama, llama.cpp's `convert_hf_to_gguf.py`, transformers'
        // `convert_llama_weights_to_hf.py`) or quantizer (TensorRT-LLM's and ModelOpt's
        // `examples/quantization/quantize.py`, AutoGPTQ's `quant_with_alpaca.py`): the job
        // converts a model's weights.
        let converts = matches!(first, "convert" | "quantize" | "quantization" | "quant");
        if !converts && (!(evaluates || applies) || !super::inference::inference_script(file)) {
            continue;
        }
        let before = lower[..start].trim_end_matches([' ', '`', '"', '\'']);
        let launched = RUNS.iter().any(|word| {
            before.ends_with(word)
                && (!word.is_ascii()
                    || before[..before.len() - word.len()]
                        .chars()
                        .next_back()
                        .is_none_or(|c| !c.is_ascii_alphanumeric()))
        });
        if launched && (converts || !denied(lower, start, file)) {
            let phase = if converts {
                Phase::FormatConversion
            } else {
                Phase::Inference
            };
            out.push((start, end, phase));
            break;
        }
    }
    out
}

/// A line holding stage words, with the lines of its paragraph around it (a hard-wrapped
/// sentence puts `while` on one line and `loading the model` on the next).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ProseLine {
    /// The line number.
    pub line: u64,
    /// The line's text.
    pub text: String,
    /// The line above, when it is not blank.
    pub before: Option<String>,
    /// The line below, when it is not blank.
    pub after: Option<String>,
}

impl ProseLine {
    /// A line alone.
    pub fn new(line: u64, text: &str) -> Self {
        ProseLine {
            line,
            text: text.to_string(),
            ..ProseLine::default()
        }
    }
}

/// Words of a training stage hit that show how far the training had got (`after 120 steps`,
/// `in the second epoch`, `after 20% of training`, `the training loop`, `the backward pass`),
/// not only that a training ran.
const PROGRESS: &[&str] = &[
    "step",
    "epoch",
    "iteration",
    "iter",
    "loop",
    "backward",
    "%",
    "halfway",
    "way through",
    "midway",
    "progresses",
    "goes on",
    "after some time",
    "after a while",
    // An RL loop's policy update (`during Megatron Actor Updating`): its step.
    "actor updat",
    "updating actor",
    "updating the actor",
];

/// Whether a training hit's words show the training's progress (see [`PROGRESS`]).
pub fn shows_training_progress(words: &str) -> bool {
    let lower = words.to_lowercase();
    PROGRESS.iter().any(|word| lower.contains(word))
}

/// Whether the words next to a host-memory failure name training without its progress (`When
/// I try to run the train code, I get a error: killed`): a training job's host memory is taken
/// as much by loading and preparing its data, its checkpoint and its workers as by its steps,
/// so such words show the job, not the stage (see [`stage_for`]).
pub fn host_training_unshown(host_memory: bool, phase: Phase, words: &str) -> bool {
    host_memory && phase == Phase::TrainingStep && !shows_training_progress(words)
}

/// Whether the words next to a host-memory failure name a model applied to inputs (`when i
/// testing on dexycb, i have some problem`): of the host's memory, the inputs are read,
/// decoded and batched there as much as the model runs, so such words show the job, not the
/// stage (as training words without progress do, [`host_training_unshown`]). Session 18: any
/// words of inference, evaluation or validation (`Getting exit code 137 in validation step
/// while training`), not only the session-16 verbs: an evaluation's host memory is its data
/// loader's and its gathered outputs' as much as the model's (AUDIT.md, session 16, rule 3).
pub fn host_apply_unshown(host_memory: bool, phase: Phase, _words: &str) -> bool {
    host_memory && phase == Phase::Inference
}

/// Whether words name a training itself, not only its progress (`after 13 iterations`).
fn names_training(lower: &str) -> bool {
    [
        "train",
        "fine-tun",
        "finetun",
        "训练",
        "微调",
        "学習",
        "학습",
        "обучен",
        "entren",
        "trein",
    ]
    .iter()
    .any(|word| lower.contains(word))
}

/// Whether a training hit `at..end` of `lower` names the job, not the stage, with nothing of
/// the training's progress in it (`job::names_the_job`; tests/fixtures/corpus/AUDIT.md,
/// "Session 15: the job or the stage").
fn names_the_job(phase: Phase, lower: &str, at: usize, end: usize) -> bool {
    let training = phase == Phase::TrainingStep && !shows_training_progress(&lower[at..end]);
    // The bare noun of inference (`vllm 推理v2.6 在一张3090 报错`, inference of a model on a
    // card) names the job on its set-up as `Training on T4:` does: a server's inference job
    // also loads its model, and nothing says which failed (AUDIT.md, session 16).
    // A count of inputs right after it (`4090单卡推理1张都会爆显存`, inferring even one image)
    // ties the failure to the model applied to them, as a per-step setting does a training's
    // (session 18).
    let inference = phase == Phase::Inference
        && matches!(&lower[at..end], "推理" | "推論" | "추론" | "inference")
        && !inputs_counted(&lower[end..]);
    (training || inference) && job::names_the_job(lower, at, end)
}

/// A count of inputs opening `after` (`1张`, `一张图`, `单帧`, `两幅`): a count and the measure
/// word of images or frames, not of cards (`一张3090`, `一张A10`, `一张16G的卡`: a card's name
/// or size follows).
fn inputs_counted(after: &str) -> bool {
    let after = after.trim_start();
    let count_end = after
        .char_indices()
        .find(|&(_, c)| !(c.is_ascii_digit() || matches!(c, '一' | '单' | '两' | '几')))
        .map_or(after.len(), |(index, _)| index);
    if count_end == 0 {
        return false;
    }
    let rest = &after[count_end..];
    let Some(measure) = rest.chars().next() else {
        return false;
    };
    let next = rest[measure.len_utf8()..].chars().next();
    matches!(measure, '张' | '幅' | '帧')
        && next.is_none_or(|c| !c.is_ascii_alphanumeric() && c != '卡' && c != '显')
}

/// Whether the words next to a failure that name `phase` show no stage: a training's job
/// without its progress (`when I finetune Llama on 4 A100s: CUDA out of memory`, and any
/// training words of a host-memory failure, [`host_training_unshown`]), or a question put to
/// another person (`请问您在训练的时候有没有遇到过cuda out of memory的情况？`).
pub fn words_unshown(host_memory: bool, phase: Phase, words: &str) -> bool {
    if host_training_unshown(host_memory, phase, words)
        || host_apply_unshown(host_memory, phase, words)
    {
        return true;
    }
    let lower = words.to_lowercase();
    let of_phase: Vec<(usize, usize, Phase)> = hits(&lower)
        .into_iter()
        .filter(|hit| hit.2 == phase)
        .collect();
    !of_phase.is_empty()
        && of_phase.iter().all(|&(at, end, phase)| {
            job::asks_another(&lower, at, end) || names_the_job(phase, &lower, at, end)
        })
}

/// The stage the reporter's words name, with the evidence: `lines` are the lines marked as
/// holding stage words, in order.
pub fn stage(lines: &[ProseLine]) -> Option<(Phase, String)> {
    stage_for(lines, false).ok()
}

/// [`stage`] for a failure of the host's memory or not. Of a host-memory failure (a kill, the
/// host allocator), words naming training decide only with its progress (`after 120 steps`,
/// `in the second epoch`): `when the training starts, it uses up all memory` shows the job, and
/// a training job's host memory goes as much to loading and preparing its data, its checkpoint
/// and its DataLoader workers as to its steps. The corpus labels follow this rule
/// (tests/fixtures/corpus/AUDIT.md, "host memory of a training job"). `Err` carries the
/// evidence of such words when nothing else decided.
pub fn stage_for(
    lines: &[ProseLine],
    host_memory: bool,
) -> Result<(Phase, String), Option<String>> {
    if let Some(found) = commented_statement(lines) {
        return Ok(found);
    }
    // (line, phase, words, the failure named in the hit's line, … in the hit's sentence).
    let mut found: Vec<(u64, Phase, String, bool, bool)> = Vec::new();
    // Words that show the job, not how far it had got: (line, words, phase, of host memory).
    let mut unshown: Option<(u64, String, Phase, bool)> = None;
    for prose in lines {
        let text = prose.text.as_str();
        // A quoted line (`> …`) is another person's words.
        if is_log_output(text)
            || text.trim_start().starts_with('>')
            || script_comment(prose)
            || expected_behaviour(prose)
        {
            continue;
        }
        let (joined, span) = paragraph(prose);
        // The stage verbs written as two words (`when i am fine tuning GPTJ`, `pre training`)
        // read as their hyphenated forms: the same length, so offsets stay the text's.
        let lower = joined
            .to_lowercase()
            .replace("fine tun", "fine-tun")
            .replace("pre train", "pre-train");
        // Offsets of the lowered text are those of the text only when no character changed
        // length; otherwise the line is read alone.
        let (joined, lower, span) = if lower.len() == joined.len() {
            (joined, lower, span)
        } else {
            (text.to_string(), text.to_lowercase(), 0..text.len())
        };
        let oom = names_the_failure(&lower);
        // A hit must touch this line (one wholly in a neighbour is that line's own).
        let mut line_hits: Vec<(usize, usize, Phase)> = hits(&lower)
            .into_iter()
            .filter(|(at, end, _)| *end > span.start && *at < span.end)
            .collect();
        // An evaluation pass or a checkpoint save named with the training around it: the inner
        // stage is the one that ran.
        let inner = |(at, end, _): &(usize, usize, Phase)| {
            let words = &lower[*at..*end];
            INNER.iter().any(|word| words.contains(word))
        };
        let training = line_hits.iter().any(|hit| hit.2 == Phase::TrainingStep);
        // (Not a training hit whose own sentence names the failure when the inner stage's
        // does not: `… up to 29% in validation. However, the training was cut off halfway
        // through, indicating CUDA out of memory`.)
        let in_failing_sentence = |(at, end, _): &(usize, usize, Phase)| {
            names_the_failure(sentence_around(&lower, *at, *end))
        };
        if line_hits.iter().any(inner) {
            let inner_fails = line_hits
                .iter()
                .any(|hit| inner(hit) && in_failing_sentence(hit));
            line_hits.retain(|hit| {
                hit.2 != Phase::TrainingStep
                    || inner(hit)
                    || (!inner_fails && in_failing_sentence(hit))
            });
        }
        // A save alone (a trainer's `Saving model checkpoint to …`) says what the run did,
        // not where it failed: it counts inside a training sentence or with the failure's
        // words.
        line_hits.retain(|hit| hit.2 != Phase::Unknown || training || oom);
        for (at, end, phase) in line_hits {
            let words = quote(&joined, &lower, at, end);
            if job::asks_another(&lower, at, end) || deny::not_a_stage_reached(&lower, at) {
                continue;
            }
            if host_training_unshown(host_memory, phase, &lower[at..end]) {
                unshown.get_or_insert((prose.line, words, phase, true));
                continue;
            }
            if host_apply_unshown(host_memory, phase, &lower[at..end]) {
                unshown.get_or_insert((prose.line, words, phase, true));
                continue;
            }
            if names_the_job(phase, &lower, at, end) {
                unshown.get_or_insert((prose.line, words, phase, false));
                continue;
            }
            let sentence = oom && names_the_failure(sentence_around(&lower, at, end));
            found.push((prose.line, phase, words, oom, sentence));
        }
        // Code named as where the failure came (`named_code`), in a sentence of this line.
        let own_sentence = !named_code(text).is_empty();
        // (Or a paragraph that points the code out as where the failure came: `The traceback
        // also tells you where it happened—in my case, during _get_per_token_logps…`.)
        let placed = oom || points_to_the_failure(&lower);
        for (at, end, phase) in named_code(&joined).into_iter().filter(|_| own_sentence) {
            if end <= span.start || at >= span.end || !placed {
                continue;
            }
            found.push((prose.line, phase, quote(&joined, &lower, at, end), oom, oom));
        }
    }
    // The iterations of an evaluation script the reporter ran (`Run python eval.py …`, then
    // `the same error after 13 iterations`) are the evaluation's, not a training's.
    // A script names the job: it decides only when no other words name a stage.
    let script = |words: &str| !script_hits(&words.to_lowercase()).is_empty();
    if found
        .iter()
        .any(|(_, phase, words, _, _)| *phase == Phase::Inference && script(words))
    {
        found.retain(|(_, phase, words, _, _)| {
            *phase != Phase::TrainingStep || names_training(&words.to_lowercase())
        });
        if found.iter().any(|(_, _, words, _, _)| !script(words)) {
            found.retain(|(_, _, words, _, _)| !script(words));
        }
    }
    let unshown = || {
        unshown.as_ref().map(|(line, words, phase, host)| {
            let inference = *phase == Phase::Inference;
            if *host && inference {
                format!(
                    "line {line}: the reporter's words \"{words}\" name a model applied to \
                     inputs, but host memory runs out reading, decoding and batching the inputs \
                     as often as while the model runs"
                )
            } else if inference {
                format!(
                    "line {line}: the reporter's words \"{words}\" name the inference job and \
                     what it ran on or with, not the moment it failed: the job also loads its \
                     model before it runs it"
                )
            } else if *host {
                format!(
                    "line {line}: the reporter's words \"{words}\" name a training run, but not \
                     how far it had got: host memory runs out loading or preparing a training's \
                     data as often as in its steps"
                )
            } else {
                format!(
                    "line {line}: the reporter's words \"{words}\" name the training job and what \
                     it ran on or with, not how far it had got: a training also runs out of \
                     memory loading, sharding or wrapping its model, before any step"
                )
            }
        })
    };
    // The stage in the sentence naming the failure, then in its line (`… reaching up to 29% in
    // validation. However, the training was cut off halfway through, indicating CUDA out of
    // memory`: the training's), then stages that agree.
    let pick = found
        .iter()
        .find(|(_, _, _, _, sentence)| *sentence)
        .or_else(|| found.iter().find(|(_, _, _, oom, _)| *oom))
        .or_else(|| {
            let first = found.first()?;
            found
                .iter()
                .all(|(_, phase, _, _, _)| *phase == first.1)
                .then_some(first)
        });
    let Some((line, phase, words, _, _)) = pick else {
        return Err(unshown());
    };
    let names = if *phase == Phase::Unknown {
        "name a checkpoint save, which is no stage of the list".to_string()
    } else {
        format!("name the stage {}", phase.as_str())
    };
    Ok((
        *phase,
        format!(
            "line {line}: the reporter's words \"{words}\" {names} (no traceback frame or log \
             line shows it)"
        ),
    ))
}

/// The sentence of `lower` around `at..end` (to the nearest `.`, `!`, `?`, `;` or line break,
/// a CJK full stop or mark).
fn sentence_around(lower: &str, at: usize, end: usize) -> &str {
    const BREAKS: [char; 8] = ['.', '!', '?', ';', '\n', '。', '！', '？'];
    // A full stop inside a word (`v2.6`, `engine.py`) breaks nothing.
    let breaks = |text: &str, index: usize, c: char| {
        BREAKS.contains(&c)
            && (c != '.'
                || text[index + 1..]
                    .chars()
                    .next()
                    .is_none_or(char::is_whitespace))
    };
    let start = lower[..at]
        .char_indices()
        .rev()
        .find(|&(index, c)| breaks(lower, index, c))
        .map_or(0, |(index, c)| index + c.len_utf8());
    let stop = lower[end..]
        .char_indices()
        .find(|&(index, c)| breaks(lower, end + index, c))
        .map_or(lower.len(), |(index, _)| end + index);
    &lower[start..stop]
}

/// The line joined with the lines of its paragraph around it (those that are a person's words
/// too, not a list item or heading starting below), and where the line lies in the joined text.
fn paragraph(prose: &ProseLine) -> (String, std::ops::Range<usize>) {
    let joins = |line: &str| {
        let trimmed = line.trim();
        !trimmed.is_empty()
            && !is_log_output(line)
            && !trimmed.starts_with(['#', '>', '`', '|'])
            && trimmed.chars().any(char::is_alphabetic)
    };
    let starts_an_item = |line: &str| {
        let trimmed = line.trim_start();
        trimmed.starts_with(['-', '*', '#'])
            || trimmed
                .split_once(['.', ')'])
                .is_some_and(|(number, _)| number.parse::<u32>().is_ok())
    };
    let text = prose.text.trim_end();
    let mut joined = String::new();
    if let Some(before) = prose
        .before
        .as_deref()
        .filter(|line| joins(line) && !starts_an_item(text) && !text.trim_start().starts_with('#'))
    {
        joined.push_str(before.trim());
        joined.push(' ');
    }
    let start = joined.len();
    joined.push_str(text);
    let end = joined.len();
    if let Some(after) = prose
        .after
        .as_deref()
        .filter(|line| joins(line) && !starts_an_item(line))
    {
        joined.push(' ');
        joined.push_str(after.trim());
    }
    (joined, start..end)
}

/// The stage hits of a lowercase text: the phrases, then the grammar's (`grammar`), each as
/// (start, end, phase), with the phrases' guards applied.
fn hits(lower: &str) -> Vec<(usize, usize, Phase)> {
    let mut out = Vec::new();
    for (phrase, phase) in APPLY_PHRASES {
        let found = phrase_starts(lower, phrase).find(|&at| {
            !(denied(lower, at, phrase)
                || stage_then_failure(lower, at + phrase.len())
                || grammar::sentence_guarded(lower, at, at + phrase.len()))
        });
        if let Some(at) = found {
            out.push((at, at + phrase.len(), *phase));
        }
    }
    for (phrase, phase) in PHRASES {
        // The first place the phrase is read as the stage: a denied one (`训练代码`, the
        // training code) does not hide a later one in the line (`训练过程中`).
        let found = phrase_starts(lower, phrase).find(|&at| {
            !(denied(lower, at, phrase)
                || stage_then_failure(lower, at + phrase.len())
                || names_a_path(&lower[at + phrase.len()..])
                || grammar::general_case(lower, at)
                || grammar::behaviour_told(lower, at)
                || (*phase == Phase::TrainingStep && cjk_job_word(lower, at, phrase)))
        });
        if let Some(at) = found {
            // A conversion of a document (`when converting multiple pdf files`) is an app's
            // model at work on the user's input; of a data set, no stage of the model.
            if *phase == Phase::FormatConversion {
                if let Some(instead) = grammar::converted_non_weights(&lower[at..]) {
                    if instead != Phase::Unknown {
                        out.push((at, at + phrase.len(), instead));
                    }
                    continue;
                }
            }
            out.push((at, at + phrase.len(), *phase));
        }
    }
    out.extend(training_titled(lower));
    out.extend(model_moved_to_the_gpu(lower));
    out.extend(conversion_named(lower));
    out.extend(named_model_load(lower));
    out.extend(named_model_load_english(lower));
    out.extend(mixed_script_hits(lower));
    out.extend(cjk_apply_hits(lower));
    out.extend(cjk_startup_hits(lower));
    out.extend(cjk_before_training_hits(lower));
    out.extend(cjk_ran_for_a_while(lower));
    out.extend(cjk_run_sampling_hits(lower));
    out.extend(cjk_question_hits(lower));
    out.extend(cjk_run_evaluation_hits(lower));
    out.extend(script_hits(lower));
    for (at, end, phase) in grammar::hits(lower)
        .into_iter()
        .chain(tested::tested_hits(lower))
    {
        if !stage_then_failure(lower, end) && !names_a_path(&lower[end..]) {
            out.push((at, end, phase));
        }
    }
    // A training word inside the words of another stage names no training that ran: a failure
    // placed before the training began (`when the training is going to start`), an adapter
    // being merged (`合并QLoRA权重`, `merging the LoRA`: the training word names the adapter).
    let around: Vec<(usize, usize)> = out
        .iter()
        .filter(|hit| matches!(hit.2, Phase::Startup | Phase::FormatConversion))
        .map(|hit| (hit.0, hit.1))
        .collect();
    out.retain(|(at, end, phase)| {
        *phase != Phase::TrainingStep || !around.iter().any(|(from, to)| at < to && end > from)
    });
    // Neither of two stages offered as one (`when training/validating`).
    let offered: Vec<(usize, usize)> = two_stages(lower).collect();
    out.retain(|(at, end, _)| !offered.iter().any(|(from, to)| at < to && end > from));
    out
}

/// Two stages offered as one, joined by a slash (`when training/validating`, `eval/train`):
/// where each such pair stands in `lower` (see [`line_stage`] and [`hits`]).
fn two_stages(lower: &str) -> impl Iterator<Item = (usize, usize)> + '_ {
    static TWO_STAGES: std::sync::LazyLock<regex::Regex> = std::sync::LazyLock::new(|| {
        crate::parse::oom_text::compile(concat!(
            r"\b(?:train|training|fine-?tuning)\s*/\s*(?:val|valid|validat|eval|evaluat|test",
            r"|infer|predict)[a-z]*\b|\b(?:val|valid|validat|eval|evaluat|test|infer|predict)",
            r"[a-z]*\s*/\s*(?:train|training|fine-?tuning)\b",
        ))
    });
    TWO_STAGES.find_iter(lower).map(|m| (m.start(), m.end()))
}

/// Words a conversion of the weights may be qualified by between `during the` and its noun.
const CONVERSION_QUALIFIERS: usize = 5;

/// A conversion of the weights named as a noun with what it converts in between (`during the
/// FP8 to FP4 MoE conversion`, `during the GGUF conversion`, `during int8 quantization`): the
/// weights rewritten into another format. At most [`CONVERSION_QUALIFIERS`] words between,
/// none ending a clause.
fn conversion_named(lower: &str) -> Vec<(usize, usize, Phase)> {
    let mut out = Vec::new();
    for (at, _) in lower.match_indices("during ") {
        if lower[..at]
            .chars()
            .next_back()
            .is_some_and(char::is_alphanumeric)
        {
            continue;
        }
        let rest = &lower[at + "during ".len()..];
        let mut offset = at + "during ".len();
        for (index, word) in rest.split(' ').enumerate() {
            if index > CONVERSION_QUALIFIERS + 1 || word.is_empty() {
                break;
            }
            let bare = word.trim_end_matches([',', '.', ';', ':', ')', '!', '?']);
            if matches!(
                bare,
                "conversion" | "quantization" | "quantisation" | "repacking" | "repack"
            ) && index > 0
            {
                out.push((at, offset + bare.len(), Phase::FormatConversion));
                break;
            }
            if bare.len() != word.len() {
                break;
            }
            offset += word.len() + 1;
        }
    }
    out
}

/// The stage one line's words name with the phrases above (no program-output filter): an app's
/// own line naming the failure and its stage (`Encountered Out of Memory during Sampling;
/// Unloading all Models...`); one stage or none.
pub fn line_stage(text: &str) -> Option<Phase> {
    let lower = text.to_lowercase();
    // Two stages offered as one (`CUDA out of memory when training/validating :`, a heading
    // over a log that shows which): the line decides neither.
    if two_stages(&lower).next().is_some() {
        return None;
    }
    let mut found = PHRASES
        .iter()
        .filter_map(|(phrase, phase)| {
            phrase_starts(&lower, phrase)
                .any(|at| !denied(&lower, at, phrase))
                .then_some(*phase)
        })
        .chain(
            ticked_functions(text)
                .into_iter()
                .map(|(_, _, phase)| phase),
        );
    let first = found.next()?;
    found.all(|phase| phase == first).then_some(first)
}

/// Where a phrase starts a word in `lower`, each place in turn (`load the model` is not in
/// `download the model`); a CJK phrase anywhere (those scripts put no spaces between words).
fn phrase_starts<'a>(lower: &'a str, phrase: &'a str) -> impl Iterator<Item = usize> + 'a {
    // A function's name (`train_step`) is a whole identifier, not a command line's option
    // (`--eval_steps 200`, `--train_step_ratio`).
    // A short word (`qlora`) is a whole word too.
    let identifier = phrase.contains('_')
        || (phrase.len() <= 5 && phrase.bytes().all(|b| b.is_ascii_lowercase()));
    lower
        .match_indices(phrase)
        .map(|(at, _)| at)
        .filter(move |&at| {
            let before = lower[..at].chars().next_back();
            let after = lower[at + phrase.len()..].chars().next();
            // A letter of a script written without spaces (CJK, from U+2E80) is no part of an
            // English word beside it (`换成qlora就不行了`).
            let joined = |c: Option<char>| {
                c.is_some_and(|c| (c.is_alphanumeric() && u32::from(c) < 0x2E80) || c == '_')
            };
            (!phrase.is_ascii() || !joined(before))
                && (!identifier || (!joined(after) && before != Some('-')))
        })
}

/// Sets start-up on a report that no stage was found for, when the reporter names the
/// process's first CUDA work as where the CUDA runtime's own out-of-memory error came
/// (`raw_cuda_error`; see `first_cuda`), and no stage is shown completed before it.
pub fn fill_first_cuda_work(report: &mut PhaseReport, lines: &[ProseLine], raw_cuda_error: bool) {
    if report.failed_in != Phase::Unknown || report.last_completed.is_some() {
        return;
    }
    let Some((phase, why)) = first_cuda::first_cuda_work(lines, raw_cuda_error) else {
        return;
    };
    report.found(phase, why);
    report.prompt_can_be_cause = Some(false);
}

/// Sets the stage of a report that none was found for, from the reporter's words
/// (`host_memory`: the failure is of the host's memory, see [`stage_for`]).
pub fn fill_unknown(report: &mut PhaseReport, lines: &[ProseLine], host_memory: bool) {
    if report.failed_in != Phase::Unknown {
        return;
    }
    // What showed the run said it was none of the stages (a checkpoint written from inside the
    // training loop): the reporter's words may only name a conversion, whose job ends in
    // writing what it converted (`file write failed on merging lora weights back`).
    let saved = !report.nothing_shown();
    // A model run on the CPU computes in the host's memory: there its stage's words are read as
    // for a GPU failure (the caveat of a GPU job's host memory, taken by its data and
    // checkpoint as much as by its steps, does not hold).
    let host_memory = host_memory && !lines.iter().any(|line| runs_on_the_cpu(&line.text));
    let (phase, why) = match stage_for(lines, host_memory) {
        Ok(found) => found,
        Err(note) => {
            report.evidence.extend(note);
            return;
        }
    };
    if saved && phase != Phase::FormatConversion {
        return;
    }
    report.found(phase, why);
    // As `decide` does: a startup stage cannot have been caused by a prompt.
    report.prompt_can_be_cause = if phase.is_startup() || report.server_was_ready == Some(false) {
        Some(false)
    } else if phase == Phase::Inference {
        Some(true)
    } else {
        None
    };
}

/// A line under an issue form's "Expected behavior" heading (`**Expected behavior**`, `###
/// Expected Behavior`, `Expected behaviour:`), or one led by those words: what the reporter
/// wanted to happen (`If the model fits the vram initially during training, no OOM error during
/// validation`), not where it failed.
fn expected_behaviour(prose: &ProseLine) -> bool {
    let heading = |text: &str| {
        let words = text
            .trim()
            .trim_start_matches(['#', '*', '_', ' '])
            .trim_end_matches(['*', '_', ':', ' '])
            .to_ascii_lowercase();
        matches!(
            words.as_str(),
            "expected behavior" | "expected behaviour" | "expected result" | "expected results"
        )
    };
    let led = |text: &str| {
        let lower = text
            .trim_start()
            .trim_start_matches(['#', '*', '_', ' '])
            .to_ascii_lowercase();
        ["expected behavior", "expected behaviour", "expected result"]
            .iter()
            .any(|words| {
                lower
                    .strip_prefix(words)
                    .is_some_and(|rest| rest.trim_start_matches(['*', '_', 's']).starts_with(':'))
            })
    };
    prose.before.as_deref().is_some_and(heading) || led(&prose.text)
}

/// Whether the reporter says the model runs on the CPU (`I am using my CPU instead of my GPU`,
/// `running on CPU only`, `I don't have a GPU`).
fn runs_on_the_cpu(text: &str) -> bool {
    let lower = text.to_lowercase();
    [
        "using my cpu",
        "using the cpu",
        "using cpu instead",
        "on cpu only",
        "on the cpu only",
        "cpu-only",
        "cpu only mode",
        "don't have a gpu",
        "do not have a gpu",
        "without a gpu",
    ]
    .iter()
    .any(|phrase| lower.contains(phrase))
}

/// A line a program printed rather than a person wrote: a progress bar, a logger's line
/// (timestamp, level, `-->`), a source location (`lib.rs:65:`), a traceback line. Its words
/// are the log's, read (or not) by the log rules, not the reporter's.
fn is_log_output(text: &str) -> bool {
    const SIGNS: [&str; 11] = [
        // Slurm's report of the kernel's kills in a job step (`slurmstepd: error: Detected 8
        // oom-kill event(s) in step 59137890.batch cgroup`): its step is the job's, no
        // training's.
        "oom-kill event",
        // transformers' warning on weights a checkpoint lacks (`modeling_utils.py`: "You should
        // probably TRAIN this model on a down-stream task…"; 5.x's load report: "Consider
        // training on your downstream task."): the library's words, not the reporter's.
        "down-stream task",
        "downstream task",
        "%|",
        "it/s",
        "s/it",
        "-->",
        "Traceback",
        "File \"",
        "[E ",
        "[W ",
    ];
    if SIGNS.iter().any(|sign| text.contains(sign)) {
        return true;
    }
    // A logger's level, as a word of its own (`ERROR:root:…`, `[INFO]`): not inside an
    // identifier the reporter quotes, as TensorFlow's `CUDA_ERROR_OUT_OF_MEMORY` in an issue's
    // title (`CUDA_ERROR_OUT_OF_MEMORY on Tesla V100 while training`, session 36).
    let glued = |c: Option<char>| c.is_some_and(|c| c.is_ascii_alphanumeric() || c == '_');
    if ["INFO", "WARNING", "ERROR", "DEBUG"].iter().any(|level| {
        text.match_indices(level).any(|(at, _)| {
            !glued(text[..at].chars().next_back())
                && !glued(text[at + level.len()..].chars().next())
        })
    }) {
        return true;
    }
    let bytes = text.as_bytes();
    // `12:34:56` (a timestamp).
    let timestamp = bytes.windows(8).any(|w| {
        w[2] == b':' && w[5] == b':' && [0, 1, 3, 4, 6, 7].iter().all(|&i| w[i].is_ascii_digit())
    });
    // `file.py:123` and the like (a source location).
    let location = [".py:", ".rs:", ".cc:", ".cpp:", ".go:", ".h:"]
        .iter()
        .any(|ext| {
            text.match_indices(ext).any(|(at, _)| {
                text[at + ext.len()..]
                    .bytes()
                    .next()
                    .is_some_and(|b| b.is_ascii_digit())
            })
        });
    // A reporter's Chinese sentence that quotes the log's error in its course (`继续推理一段时间
    // 后，api server会报CUDA runtime error: out of memory /opt/…/allocator.h:231 错误`): the
    // sentence opens in CJK and its clause break (a full-width comma) comes before the quoted
    // location, which no program's log line starts so.
    let quoting = || {
        let first = text.trim_start().chars().next();
        let clause = text.find('，');
        let quoted = [".py:", ".rs:", ".cc:", ".cpp:", ".go:", ".h:"]
            .iter()
            .filter_map(|ext| text.find(ext))
            .min();
        first.is_some_and(is_cjk) && matches!((clause, quoted), (Some(c), Some(q)) if c < q)
    };
    timestamp || (location && !quoting())
}

/// A comment of a script the reporter pasted, among its statements (`# Load model` over `model =
/// AutoAWQForCausalLM.from_pretrained(…)`, then `# Quantize`): a heading of the script's
/// steps, all of which the script runs, not the step that failed. Not a comment that names the
/// failure (`# OOM here`) or holds an error, nor a markdown heading (an issue's title), which
/// no statement surrounds.
fn script_comment(prose: &ProseLine) -> bool {
    let text = prose.text.trim_start();
    let Some(comment) = text.strip_prefix('#') else {
        return false;
    };
    // A heading is short; a longer comment may tell what the code is for, and an error pasted
    // as a comment (`# OSError: Can't load the model …`) is the failure's own line.
    let lower = comment.to_lowercase();
    if comment.starts_with('#')
        || comment.split_whitespace().count() > 6
        || lower.contains("error")
        || lower.contains("exception")
        || names_the_failure(&lower)
    {
        return false;
    }
    let statement = |line: &Option<String>| {
        line.as_deref().is_some_and(|line| {
            let line = line.trim_start();
            [
                "import ", "from ", "for ", "with ", "def ", "print(", "return ",
            ]
            .iter()
            .any(|start| line.starts_with(start))
                || assignment_or_call(line)
        })
    };
    statement(&prose.after) || statement(&prose.before)
}

/// A statement that assigns (`model = f(…)`, `a, b = …`, `x += 1`) or calls (`model.quantize(…)`):
/// a name first, then `=` (not `==`) or `(`.
fn assignment_or_call(line: &str) -> bool {
    if !line.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_') {
        return false;
    }
    // The name (a space only after a comma: `a, b = …`), then spaces.
    let mut name_end = line.len();
    let mut previous = ' ';
    for (at, c) in line.char_indices() {
        let name = c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '[' | ']' | ',');
        if !(name || (c == ' ' && previous == ',')) {
            name_end = at;
            break;
        }
        previous = c;
    }
    let rest = line[name_end..].trim_start_matches(' ');
    let rest = rest.strip_prefix(['+', '-', '*', '/']).unwrap_or(rest);
    rest.starts_with('(') || (rest.starts_with('=') && !rest.starts_with("=="))
}

/// A CJK ideograph (the unified block and its first extension).
fn is_cjk(c: char) -> bool {
    matches!(c, '\u{4E00}'..='\u{9FFF}' | '\u{3400}'..='\u{4DBF}')
}

/// The phrase with a few words around it, at most 80 characters, from the original text.
fn quote(text: &str, lower: &str, at: usize, end_from: usize) -> String {
    // `to_lowercase` keeps byte offsets for the text it is used on only when no character
    // changes length; fall back to the words themselves otherwise.
    if lower.len() != text.len() || !text.is_char_boundary(at) || !text.is_char_boundary(end_from) {
        return lower.get(at..end_from).unwrap_or_default().to_string();
    }
    // Up to about 30 characters each side, widened to whole words.
    let start = text[..at]
        .char_indices()
        .rev()
        .take(30)
        .last()
        .map_or(at, |(index, _)| index);
    let start = text[..start]
        .rfind(char::is_whitespace)
        .map_or(0, |space| crate::parse::text::after_char_at(text, space));
    let end = text[end_from..]
        .char_indices()
        .nth(30)
        .map_or(text.len(), |(index, _)| end_from + index);
    let end = text[end..]
        .find(char::is_whitespace)
        .map_or(text.len(), |space| end + space);
    text[start..end].trim().to_string()
}

#[cfg(test)]
mod tests;

#[cfg(test)]
mod s36p1_tests;
#[cfg(test)]
mod s39a_tests;
