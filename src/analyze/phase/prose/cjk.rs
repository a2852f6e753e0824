//! The reporter's stage words in Chinese, Japanese and Korean sentences, and English stage words
//! glued to a CJK word of time: the hits `prose::hits` adds to its fixed phrases.

use super::*;

/// An English stage word written with a CJK word of time right after it, as code-mixed issue
/// threads write them (`training的时候`, `inference时`, `KoAlpaca를 training하는데 OOM`,
/// `finetuning 중에`): the stage, as `训练时` is.
pub(super) fn mixed_script_hits(lower: &str) -> Vec<(usize, usize, Phase)> {
    const WORDS: &[(&str, Phase)] = &[
        ("training", Phase::TrainingStep),
        ("fine-tuning", Phase::TrainingStep),
        ("finetuning", Phase::TrainingStep),
        ("finetune", Phase::TrainingStep),
        ("train", Phase::TrainingStep),
        ("inference", Phase::Inference),
        ("infer", Phase::Inference),
        ("generation", Phase::Inference),
        ("generate", Phase::Inference),
        ("predict", Phase::Inference),
        ("eval", Phase::Inference),
        ("evaluation", Phase::Inference),
        // `Evaluate时` (at Evaluate), `validation时`, `test时`.
        ("evaluate", Phase::Inference),
        ("validation", Phase::Inference),
        ("test", Phase::Inference),
        // A load named with what it loads (`系统内存在Loading pipeline阶段崩了`, the host's
        // memory broke in the Loading pipeline stage; `load model时`).
        ("loading pipeline", Phase::WeightsLoad),
        ("loading model", Phase::WeightsLoad),
        ("loading the model", Phase::WeightsLoad),
        ("loading checkpoint", Phase::WeightsLoad),
        ("loading weights", Phase::WeightsLoad),
        ("load model", Phase::WeightsLoad),
        ("load pipeline", Phase::WeightsLoad),
    ];
    const TIME: &[&str] = &[
        "的时候",
        "时候",
        "时",
        "過程中",
        "过程中",
        // `在train的过程仍然中断` (in the course of train, it still breaks).
        "的过程",
        "的過程",
        "过程",
        "過程",
        "中",
        // The stage itself (`Loading pipeline阶段`).
        "阶段",
        "階段",
        "時",
        "の時",
        "中に",
        "하는데",
        "하는 중",
        "하던 중",
        "할 때",
        "하다가",
        "중",
        "시",
        "도중",
    ];
    let mut out = Vec::new();
    for (word, phase) in WORDS {
        for (at, _) in lower.match_indices(word) {
            let end = at + word.len();
            let before = lower[..at].chars().next_back();
            if before.is_some_and(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-') {
                continue;
            }
            // A script's or function's name that starts with the word (`在执行train_multi过程中`,
            // while running train_multi): its identifier's tail, then the word of time.
            let tail = lower[end..].strip_prefix('_').map_or(0, |rest| {
                1 + rest
                    .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                    .unwrap_or(rest.len())
            });
            let after = &lower[end + tail..];
            // At most one space between (`training 中に`), and a CJK word right there.
            let rest = after.strip_prefix(' ').unwrap_or(after);
            if rest.starts_with(|c: char| c.is_ascii()) || after.starts_with("  ") {
                continue;
            }
            // Or the progressive `正在` earlier in its clause (`我正在对internvl2…进行full
            // finetune，…报错`, I was in the middle of a full finetune of internvl2: …).
            let clause_start = lower[..at]
                .rfind(['，', '。', ',', '；', '\n'])
                .unwrap_or(0);
            let progressive = lower[clause_start..at].contains("正在");
            if (TIME.iter().any(|time| rest.starts_with(time)) || progressive)
                && !denied(lower, at, word)
            {
                out.push((at, end, *phase));
                break;
            }
        }
    }
    out
}

/// An English word of sampling run by a Chinese verb of running, with a word of time after it or
/// `就` (then) closing `每…` (each time …): `依然每执行sample就爆显存` (each time sample runs, the
/// VRAM blows), `在进行sample的时候` (while doing sample): the model applied to make samples, a
/// generator's or a diffusion model's (session 34). The verb is needed: `sample` alone is as
/// often a data set's item (`每个sample`).
pub(super) fn cjk_run_sampling_hits(lower: &str) -> Vec<(usize, usize, Phase)> {
    const RUN: &[&str] = &["执行", "进行", "运行", "跑"];
    const TIME: &[&str] = &["的时候", "时候", "时", "过程中", "的过程", "就", "都"];
    let mut out = Vec::new();
    for word in ["sampling", "sample"] {
        for (at, _) in lower.match_indices(word) {
            let end = at + word.len();
            let before = lower[..at].strip_suffix(' ').unwrap_or(&lower[..at]);
            let after = &lower[end..];
            let after = after.strip_prefix(' ').unwrap_or(after);
            if after.starts_with(|c: char| c.is_ascii_alphanumeric() || c == '_') {
                continue;
            }
            if !RUN.iter().any(|verb| before.ends_with(verb)) {
                continue;
            }
            let each_time = lower[..at].contains('每');
            let timed = TIME.iter().any(|time| {
                after.starts_with(time) && (each_time || !matches!(*time, "就" | "都"))
            });
            if timed && !denied(lower, at, word) {
                out.push((at, end, Phase::Inference));
                break;
            }
        }
    }
    out
}

/// Chinese words of a run that went on for a while (`持续运行时显存一直缓慢增长直到oom`, memory
/// grows while it keeps running until the OOM; `运行一段时间后报错`), in a sentence that names
/// the failure and no training or load: inference, as English `after running for a while`
/// (session 18).
pub(super) fn cjk_ran_for_a_while(lower: &str) -> Vec<(usize, usize, Phase)> {
    const WORDS: &[&str] = &[
        "持续运行",
        "运行一段时间",
        "运行了一段时间",
        "跑一段时间",
        "跑了一段时间",
        // The inference named as what went on (`继续推理一段时间后，api server会报CUDA runtime
        // error: out of memory`, after inferring for a while more).
        "推理一段时间",
        "推理了一段时间",
    ];
    const BREAKS: [char; 6] = ['。', '！', '？', '!', '?', '\n'];
    let mut out = Vec::new();
    for word in WORDS {
        for (at, _) in lower.match_indices(word) {
            let start = lower[..at].rfind(BREAKS).map_or(0, |found| {
                found + lower[found..].chars().next().map_or(1, char::len_utf8)
            });
            let stop = lower[at..]
                .find(BREAKS)
                .map_or(lower.len(), |found| at + found);
            let sentence = &lower[start..stop];
            let fails = ["oom", "显存", "报错", "错误", "out of memory"]
                .iter()
                .any(|failure| sentence.contains(failure));
            let other = ["训练", "微调", "加载", "train"]
                .iter()
                .any(|stage| sentence.contains(stage));
            if fails && !other {
                out.push((at, at + word.len(), Phase::Inference));
            }
        }
    }
    out
}

/// Chinese `启动` (starting a server or an app) placed as the failure's moment: a word of time in
/// its clause (`启动vllm server 的时候显存爆了`, `启动时`, `启动过程中`) or the failure right after it
/// (`…Qwen2.5-32B启动出现OOM`): start-up, as English `fails to start` / `at startup` are (session
/// 18). Not the job named (`使用vllm启动总是报错`, `vllm api方式启动，报显存不足`: no word of time,
/// the corpus labels leave them unknown), a training started (`启动训练`, `启动13B模型训练`), the
/// launch's settings (`启动参数`, `启动命令`, `启动配置`, `启动日志`), a negation (`不启动`).
pub(super) fn cjk_startup_hits(lower: &str) -> Vec<(usize, usize, Phase)> {
    const WORD: &str = "启动";
    let mut out = Vec::new();
    for (at, _) in lower.match_indices(WORD) {
        let end = at + WORD.len();
        let before = &lower[..at];
        let after = &lower[end..];
        if before.ends_with('不') || before.ends_with("没有") || before.ends_with('没') {
            continue;
        }
        if ["参数", "命令", "配置", "日志", "脚本", "方式"]
            .iter()
            .any(|word| after.starts_with(word))
        {
            continue;
        }
        let clause_end = after
            .find(['，', ',', '。', '；', ';', '！', '？', '!', '?', '\n'])
            .unwrap_or(after.len());
        let clause = &after[..clause_end];
        if clause.contains("训练") || clause.contains("微调") {
            continue;
        }
        let timed = ["的时候", "时候", "过程中", "时"]
            .iter()
            .filter_map(|word| clause.find(word))
            .min();
        // (`启动不起来` / `启动不了`: cannot start, session 49.)
        let right_after = [
            "出现",
            "就报",
            "报错",
            "爆显存",
            "oom",
            "失败",
            "不起来",
            "不了",
        ]
        .iter()
        .any(|word| after.trim_start().starts_with(word));
        if let Some(time) = timed {
            out.push((at, end + time, Phase::Startup));
        } else if right_after {
            out.push((at, end, Phase::Startup));
        }
    }
    out
}

/// A CJK verb of a model applied to inputs with a word of time after it in its clause, as the
/// threads write them (`识别图片时`, recognizing images; `在使用简体中文模型时`, while using the
/// model; `翻訳中`, `문서 인식 중`): inference (session 16). The verb alone names the job or a
/// thing (`检测模型`, a detection model; `识别率`, the recognition rate), so a word of time is
/// needed; `使用` (using) and `调用` (calling) need `模型` (the model) before the time word, `处理` (processing)
/// needs inputs (`视频`, `图片`, `文档`, `请求`), and a training word in between (`使用LoRA微调…
/// 时`) leaves it to the training's words.
pub(super) fn cjk_apply_hits(lower: &str) -> Vec<(usize, usize, Phase)> {
    const VERBS: &[&str] = &[
        "识别",
        "檢測",
        "检测",
        "翻译",
        "翻譯",
        "转录",
        "转写",
        "分割",
        "跟踪",
        "追踪",
        "预测",
        "預測",
        "解析",
        "编码",
        "解码",
        "decode",
        "向量化",
        "计算向量",
        "抠图",
        "上色",
        "处理",
        "處理",
        "使用",
        "调用",
        "文字起こし",
        "翻訳",
        "検出",
        "認識",
        "予測",
        "번역",
        "인식",
        "탐지",
        "검출",
        "예측",
        "전사",
        "처리",
    ];
    const TIME: &[&str] = &[
        "的时候",
        "时候",
        "时",
        "過程中",
        "过程中",
        "期间",
        "時",
        "中",
        "の際",
        "際",
        "する際",
        "すると",
        " 중",
        "중",
        "할 때",
        "할때",
        "하는데",
        "하는 중",
        "하던 중",
        "하다가",
        "시",
    ];
    const INPUTS: &[&str] = &[
        "视频",
        "影片",
        "图片",
        "图像",
        "照片",
        "文档",
        "音频",
        "请求",
        "pdf",
        "文本",
        "動画",
        "画像",
        "文書",
        "音声",
        "영상",
        "이미지",
        "문서",
        "음성",
        "요청",
    ];
    const TRAINING: &[&str] = &["训练", "微调", "学習", "학습", "훈련", "train", "tun"];
    const STOPS: &[char] = &[
        '，', ',', '。', '.', '；', ';', '！', '!', '？', '?', '\n', '、',
    ];
    let mut out = Vec::new();
    for verb in VERBS {
        for (at, _) in lower.match_indices(verb) {
            let after = &lower[at + verb.len()..];
            let clause = &after[..after.find(STOPS).unwrap_or(after.len())];
            // The word of time within a few characters of the verb (its object between). `中`
            // is `during` only at the clause's end or before the failure (`识别中文` is
            // recognizing Chinese); `时` is no time in `时间` (duration).
            let is_time = |i: usize, time: &str| {
                let next = clause[i + time.len()..].trim_start();
                match time {
                    "中" => {
                        next.is_empty()
                            || [
                                "报",
                                "出",
                                "显存",
                                "爆",
                                "oom",
                                "out of",
                                "エラー",
                                "に",
                                "で",
                            ]
                            .iter()
                            .any(|word| next.starts_with(word))
                    }
                    "时" | "時" => !next.starts_with(['间', '間', '代', '刻']),
                    // Korean `시` / `중` end a word (`인식 시에`, `처리 중`), not start one (`시스템`,
                    // `중국`).
                    "시" | "중" | " 중" => next.chars().next().is_none_or(|c| {
                        !('\u{AC00}'..='\u{D7A3}').contains(&c) || "에이".contains(c)
                    }),
                    _ => true,
                }
            };
            let Some((gap, time)) = clause.char_indices().take(16).find_map(|(i, _)| {
                TIME.iter()
                    .find(|t| clause[i..].starts_with(*t) && is_time(i, t))
                    .map(|t| (i, *t))
            }) else {
                continue;
            };
            let between = &clause[..gap];
            if TRAINING
                .iter()
                .any(|word| between.contains(word) || lower[..at].ends_with(word))
            {
                continue;
            }
            let needs_model = matches!(*verb, "使用" | "调用");
            if needs_model && !between.contains("模型") && !between.contains("model") {
                continue;
            }
            let needs_inputs = matches!(*verb, "处理" | "處理" | "처리");
            if needs_inputs && !INPUTS.iter().any(|word| between.contains(word)) {
                continue;
            }
            if denied(lower, at, verb) {
                continue;
            }
            out.push((at, at + verb.len() + gap + time.len(), Phase::Inference));
            break;
        }
    }
    out
}

/// A question put to a chat model as the failure's moment, in Chinese: `问` (ask) with its
/// object, a quoted question (`问“你好啊”`) or `…问题` (`问特定问题`, `问几个问题`), or `提问`
/// (asking), then a word of consequence or time (`就`, `会`, `时`, `后`, `都`) whose clause
/// names the failure (`结果问“你好啊”就会爆显存`, asking 'hello' blows the VRAM): a generation,
/// inference (session 35). Not the reporter's own question to the thread (`请问`, `想问`,
/// `问一下`, `问个问题，为什么…`: no word of consequence right after the object), not `问题`
/// alone (a problem), not a training's words in the clause.
pub(super) fn cjk_question_hits(lower: &str) -> Vec<(usize, usize, Phase)> {
    const ASKER: &[char] = &[
        '请', '想', '询', '访', '疑', '学', '顾', '反', '发', '咨', '要',
    ];
    const THEN: &[&str] = &["就", "会", "的时候", "时", "后", "都", "也"];
    const FAILS: &[&str] = &[
        "爆显存",
        "显存",
        "oom",
        "out of memory",
        "报错",
        "崩",
        "溢出",
        "killed",
    ];
    const CLOSE: &[char] = &['，', ',', '。', '；', ';', '！', '!', '？', '?', '\n'];
    let mut out = Vec::new();
    for (at, _) in lower.match_indices('问') {
        let before = lower[..at].chars().next_back();
        if before.is_some_and(|c| ASKER.contains(&c)) {
            continue;
        }
        let after = &lower[at + '问'.len_utf8()..];
        let object_end = if before == Some('提') {
            Some(0)
        } else if let Some(quoted) = after.strip_prefix(['“', '"', '「', '『']) {
            quoted
                .find(['”', '"', '」', '』'])
                .filter(|&end| end <= 90)
                .map(|end| {
                    let close = quoted[end..].chars().next().map_or(1, char::len_utf8);
                    after.len() - quoted.len() + end + close
                })
        } else {
            // `问题` within a few characters, nothing that ends a clause between.
            after
                .char_indices()
                .take(6)
                .find(|(i, _)| after[*i..].starts_with("问题"))
                .map(|(i, _)| i)
                .filter(|&i| !after[..i].contains(CLOSE) && !after[..i].contains('问'))
                .map(|i| i + "问题".len())
                .filter(|_| !after.starts_with('题'))
        };
        let Some(end) = object_end else {
            continue;
        };
        let rest = after[end..].trim_start();
        if !THEN.iter().any(|word| rest.starts_with(word)) {
            continue;
        }
        let clause = &rest[..rest.find(CLOSE).unwrap_or(rest.len())];
        let training = ["训练", "微调", "train"].iter().any(|w| clause.contains(w));
        if FAILS.iter().any(|word| clause.contains(word)) && !training {
            let stop = at + '问'.len_utf8() + end;
            out.push((at, stop, Phase::Inference));
            break;
        }
    }
    out
}

/// An English word of evaluation or prediction run by a Chinese verb of running, then a word of
/// consequence or time whose clause names the failure: `微调后进行evaluate会报OOM` (running
/// evaluate after the fine-tune reports an OOM), `执行predict时爆显存`: the model applied
/// without a backward pass, inference, as `评估的时候` is (session 35). The verb is needed (an
/// `eval` alone is as often a script's or a setting's name), and so is the failure in the
/// clause after it.
pub(super) fn cjk_run_evaluation_hits(lower: &str) -> Vec<(usize, usize, Phase)> {
    const RUN: &[&str] = &["进行", "执行", "运行", "跑"];
    const WORDS: &[&str] = &[
        "evaluation",
        "evaluate",
        "eval",
        "prediction",
        "predict",
        "inference",
        "infer",
    ];
    const THEN: &[&str] = &["的时候", "时候", "时", "过程中", "就", "会", "都"];
    const FAILS: &[&str] = &["oom", "out of memory", "显存", "报错", "爆", "溢出"];
    const CLOSE: &[char] = &['，', ',', '。', '；', ';', '！', '!', '？', '?', '\n'];
    let mut out = Vec::new();
    for word in WORDS {
        for (at, _) in lower.match_indices(word) {
            let before = lower[..at].strip_suffix(' ').unwrap_or(&lower[..at]);
            if !RUN.iter().any(|verb| before.ends_with(verb)) {
                continue;
            }
            let end = at + word.len();
            let after = &lower[end..];
            if after.starts_with(|c: char| c.is_ascii_alphanumeric() || c == '_' || c == '.') {
                continue;
            }
            let after = after.strip_prefix(' ').unwrap_or(after);
            let Some(then) = THEN.iter().find(|then| after.starts_with(*then)) else {
                continue;
            };
            let clause = &after[then.len()..];
            let clause = &clause[..clause.find(CLOSE).unwrap_or(clause.len())];
            if FAILS.iter().any(|fail| clause.contains(fail)) && !denied(lower, at, word) {
                out.push((at, end, Phase::Inference));
                return out;
            }
        }
    }
    out
}

/// Session 37 (p2): the failure placed just before a training began, in its set-up, in Chinese,
/// Japanese and Korean as English `the training was about to begin` / `before training started`
/// is read (`grammar::before_training_hit`): `终于要训起来的时候` (just as it was finally about
/// to train), `即将开始训练时`, `准备开始微调的时候`, `训练开始前`, `开始训练之前`, `学習開始前`,
/// `학습 시작 전에` → start-up. A bare `训练前` (before training, often the reporter's own
/// preparation) is not read, nor a bare `要训练的时候` (when I want to train: any moment of it).
pub(super) fn cjk_before_training_hits(lower: &str) -> Vec<(usize, usize, Phase)> {
    static ABOUT_TO: std::sync::LazyLock<regex::Regex> = std::sync::LazyLock::new(|| {
        crate::parse::oom_text::compile(concat!(
            r"(?:(?:快要|就要|即将|准备|正要)(?:开始)?(?:训练|训|微调|train)(?:起来|了)?",
            r"|要(?:开始(?:训练|训|微调|train)(?:起来)?|(?:训练|训|微调)起来))",
            r"(?:的时候|时候|时|之前|前)",
            r"|(?:训练|微调)开始(?:之)?前|开始(?:训练|微调)(?:之)?前",
            r"|学習(?:の)?開始(?:直)?前|학습\s?시작\s?(?:직)?전"
        ))
    });
    ABOUT_TO
        .find_iter(lower)
        .map(|found| (found.start(), found.end(), Phase::Startup))
        .collect()
}
