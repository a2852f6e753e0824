//! What keeps a phrase of prose from telling this failure's stage: a negation, advice, a
//! question, a stage that went well or ended (English, Chinese, Japanese, Korean), a path
//! that only contains the word, and a phrase that modifies a noun.

use super::*;

/// A program's status line naming what it works on (`Loading model: ~/models/Euryale-70B`,
/// `Loading model from models/ldm/model.ckpt`): the phrase is followed by a path. The line says
/// what started, not that it failed there.
pub(super) fn names_a_path(after: &str) -> bool {
    let rest = after.trim_start();
    let rest = rest
        .strip_prefix(':')
        .or_else(|| rest.strip_prefix("from "))
        .map(str::trim_start);
    rest.and_then(|rest| rest.split_whitespace().next())
        .is_some_and(|token| token.contains('/') || token.contains('\\'))
}

/// The out-of-memory words come after the phrase, behind a `but then`: the stage named was
/// passed.
pub(super) fn stage_then_failure(lower: &str, end: usize) -> bool {
    let after = &lower[end..];
    let Some(oom) = OOM_WORDS.iter().filter_map(|word| after.find(word)).min() else {
        return false;
    };
    THEN.iter().any(|word| after[..oom].contains(word))
}

pub(super) fn denied(lower: &str, at: usize, phrase: &str) -> bool {
    let after = &lower[at + phrase.len()..];
    if !phrase.is_ascii() && BEFORE_CJK.iter().any(|word| lower[..at].ends_with(word)) {
        return true;
    }
    if !phrase.is_ascii() && AFTER_CJK.iter().any(|word| after.starts_with(word)) {
        return true;
    }
    // … or before it (`训练之前就出现了问题`: the problem came before the training; `学習前`,
    // `학습 전에`).
    if !phrase.is_ascii() && BEFORE_STAGE_CJK.iter().any(|word| after.starts_with(word)) {
        return true;
    }
    if !phrase.is_ascii() {
        // `训练结束之后` may put words between: the next few characters.
        let near: String = after.chars().take(4).collect();
        if AFTER_CJK.iter().any(|word| near.contains(word)) {
            return true;
        }
        if korean_completed_past(after)
            || went_well_cjk(after)
            || asks_whether(lower, at, after)
            || advice_cjk(lower, at)
        {
            return true;
        }
    }
    if modifies_a_noun(after) {
        return true;
    }
    // The short form naming a thing made during the training (`a mid-training checkpoint`,
    // `mid-epoch evaluation`), not the training at work.
    if phrase.starts_with("mid")
        && [
            " checkpoint",
            " checkpoints",
            " eval",
            " evaluation",
            " evaluations",
            " validation",
            " save",
            " saving",
            " resume",
        ]
        .iter()
        .any(|noun| after.starts_with(noun))
    {
        return true;
    }
    if phrase.is_ascii() && went_well(after) {
        return true;
    }
    // A kernel that failed to launch (`Failed to launch CUDA kernel: fusion_29`, PhysX's `fail
    // to launch kernel stage 1`) is a GPU error's words, not a program's start.
    if phrase.ends_with("launch")
        && [
            " cuda kernel",
            " kernel",
            " the kernel",
            " a kernel",
            " cuda",
        ]
        .iter()
        .any(|noun| after.starts_with(noun))
    {
        return true;
    }
    // A task named by its noun (`to help super-resolution task`, `the super-resolution speed`):
    // the field or the program's pace, not its run failing.
    if phrase.ends_with("resolution")
        && [" task", " network", " speed", " method", " research"]
            .iter()
            .any(|noun| after.starts_with(noun))
    {
        return true;
    }
    if phrase.ends_with("load") && loads_a_library(after) {
        return true;
    }
    if not_a_stage_reached(lower, at) || request_size_of_a_training(lower, at, phrase) {
        return true;
    }
    let before: Vec<&str> = lower[..at].split_whitespace().rev().take(3).collect();
    before.iter().enumerate().any(|(index, word)| {
        let word = word.trim_matches(|c: char| !(c.is_alphanumeric() || c == '\''));
        // `after` and `before` move the stage only right before it (`after starting an image
        // generation` is still the generation).
        let moving = matches!(
            word,
            "after" | "before" | "finished" | "done" | "после" | "después" | "depois"
        );
        // `I get CUDA OOM if I try to train this model`: the failure reported before the `if`
        // is the reporter's own, under that condition.
        let reported_if = word == "if" && {
            let sentence_start = lower[..at]
                .rfind(['.', '!', '?', '\n', '。'])
                .map_or(0, |found| {
                    found + lower[found..].chars().next().map_or(1, char::len_utf8)
                });
            names_the_failure(&lower[sentence_start..at])
                || own_condition_then_failure(&lower[sentence_start..], at - sentence_start)
        };
        // `before the KSampler can proceed`: the stage not reached yet, with its article.
        let article_between = index == 1
            && word == "before"
            && matches!(
                before[0].trim_matches(|c: char| !c.is_alphanumeric()),
                "the" | "a" | "an"
            );
        DENY.contains(&word) && (!moving || index == 0 || article_between) && !reported_if
    })
}

/// Whether a sentence (from its start) states the reporter's own condition with the failure
/// it brings (`But if I use the predict function …, it throws an OOM error`, session 49): `if
/// I` / `if we` before the stage at `at`, and after it, within the sentence, the failure named
/// with no modal, future, negation or question (`if I train on two cards, would it still run out
/// of memory?`, `if we load it in 8 bits it won't run out of memory`).
fn own_condition_then_failure(sentence: &str, at: usize) -> bool {
    let head = &sentence[..at];
    if !(head.contains("if i ") || head.contains("if we ")) {
        return false;
    }
    let rest = &sentence[at..];
    let end = rest.find(['.', '!', '?', '\n', '。']).unwrap_or(rest.len());
    let clause = &rest[..end];
    if rest[end..].starts_with('?') {
        return false;
    }
    let modal = clause
        .split(|c: char| !(c.is_alphanumeric() || c == '\''))
        .any(|word| {
            matches!(
                word,
                "would"
                    | "will"
                    | "could"
                    | "might"
                    | "should"
                    | "won't"
                    | "wouldn't"
                    | "not"
                    | "no"
                    | "never"
                    | "avoid"
                    | "without"
            )
        });
    !modal && names_the_failure(clause)
}

/// Whether the rest of a stage phrase's sentence says the stage went well (`While training I
/// also use the ImageDataGenerator and everything works as expected. But if I use the predict
/// function …, it throws an OOM error`, session 49): up to the sentence's end, a turn (`but`,
/// `until`, `then`) or the failure's own words, a word of success.
fn went_well(after: &str) -> bool {
    // One clause: a comma, a bracket or a colon ends it (`when loading the model, not sure why it
    // works on yours`), and so does a relative clause (`to load models that were loading fine
    // before`).
    let end = after
        .find(['.', '!', '?', '\n', ';', ',', '(', ':'])
        .unwrap_or(after.len());
    let clause = &after[..end];
    let clause = [
        " but ",
        " however",
        " although",
        " though",
        " until ",
        " till ",
        " then ",
        " except",
        " that ",
        " which ",
    ]
    .iter()
    .chain(OOM_WORDS.iter())
    .filter_map(|word| clause.find(word))
    .min()
    .map_or(clause, |at| &clause[..at]);
    // Words keep their hyphens: `fine-tune` is no `fine`.
    clause
        .split(|c: char| !(c.is_alphanumeric() || c == '\'' || c == '-'))
        .any(|word| {
            matches!(
                word,
                "works" | "worked" | "fine" | "successfully" | "perfectly"
            )
        })
        || [
            "as expected",
            "no problem",
            "no issue",
            "without problem",
            "without issue",
        ]
        .iter()
        .any(|phrase| clause.contains(phrase))
}

/// Whether the Chinese sentence holding a stage word (at `at`) gives advice (AUDIT.md, session
/// 15, rule 4: not the reporter's stage): a clause of it opens with `请` (please: `…太小了，
/// 请检查一下你的显卡，或者使用多卡训练`), or it says `建议` (suggest), `不妨` (you might as
/// well), or bids the reader check or try (`看一下`, `检查一下`, `试一下`, `试试`: `重新训练的时候，
/// 看一下你的显存…`); not a sentence of the reporter's own (`我`).
fn advice_cjk(lower: &str, at: usize) -> bool {
    const BREAKS: [char; 6] = ['。', '！', '？', '!', '?', '\n'];
    let start = lower[..at].rfind(BREAKS).map_or(0, |found| {
        found + lower[found..].chars().next().map_or(0, char::len_utf8)
    });
    let end = lower[at..]
        .find(BREAKS)
        .map_or(lower.len(), |found| at + found);
    let sentence = lower[start..end]
        .trim_start_matches(|c: char| c.is_whitespace() || matches!(c, '>' | '"' | '“' | '*'));
    // The reporter's own sentence (`我`, I): a request (`您可以帮忙查看下…吗`), not advice.
    if sentence.contains('我') {
        return false;
    }
    // A clause before the stage word opening with `请` (not `请问`, may I ask, nor a program's
    // `请稍后`, please wait, after it).
    let before = &lower[(end - sentence.len()).min(at)..at];
    before.split(['，', ',', '；', ';']).any(|clause| {
        let clause = clause.trim_start();
        clause.starts_with('请') && !clause.starts_with("请问")
    }) || ["建议", "不妨", "看一下", "检查一下", "试一下", "试试"]
        .iter()
        .any(|word| sentence.contains(word))
}

/// Words after a CJK stage word, in its sentence, that say the stage went well (`训练时没问题`,
/// `다시 학습을 진행하면 문제 없이 실행될 것`, `学習は問題なく`), as `grammar`'s `went well` does for
/// English.
fn went_well_cjk(after: &str) -> bool {
    const WELL: &[&str] = &[
        "没有问题",
        "没问题",
        "没有报错",
        "不报错",
        "正常运行",
        "문제 없이",
        "문제없이",
        "문제가 없",
        "問題なく",
        "問題なし",
        // `开启训练成功`, `학습 성공`: the stage succeeded.
        "成功",
        "성공",
        "問題ありません",
        // `정상적으로 학습이 완료되었습니다` (the training completed normally), `学習が完了`: the
        // stage ran to its end.
        "완료",
        "完了",
    ];
    let end = after
        .find(['.', '。', '!', '！', '?', '？', ',', '，', '\n'])
        .unwrap_or(after.len());
    let sentence = &after[..end];
    // `训练时正常，测试时显存不够` (training is normal, at testing the memory runs short): 正常
    // (normal) alone, not 不正常 / 非正常 (abnormal), nor a start that went normally before
    // the failure (`刚开始正常 两三秒之后就报错`, it started normally, seconds later it failed).
    let normal = sentence.match_indices("正常").any(|(at, _)| {
        let before = &sentence[..at];
        !["不", "非", "开始", "開始"]
            .iter()
            .any(|word| before.ends_with(word))
    });
    normal || WELL.iter().any(|word| sentence.contains(word))
}

/// Chinese `X的Y`: the stage words modify the noun after them (`inference的convert`, the
/// inference folder's convert script; `训练的数据`, the training data), unless that noun is a
/// time or a stage (`训练的时候`, while training; `推理的过程中`, during inference); and the
/// stage's code or script (`推理相关代码`, `训练脚本`).
fn modifies_a_noun(after: &str) -> bool {
    // `推理相关代码：` (the inference-related code:), `训练代码`, `推理脚本`: the code of the
    // stage, shown or named, not the stage that failed.
    if ["相关代码", "相关的代码", "代码", "脚本"]
        .iter()
        .any(|noun| after.starts_with(noun))
    {
        return true;
    }
    let Some(rest) = after.strip_prefix('的') else {
        return false;
    };
    !["时", "過程", "过程", "阶段", "期间", "時"]
        .iter()
        .any(|word| rest.starts_with(word))
}

/// A Chinese question whether the failure will come (`推理baichuan-13b，1*A100（80G），会OOM？`,
/// will inference of it run out of memory?): `会` (will) before the question mark of the
/// stage's sentence. Asked, not reported; a question why it comes (`为什么…训练会出现OOM呢？`)
/// reports it.
fn asks_whether(lower: &str, at: usize, after: &str) -> bool {
    const STOPS: [char; 5] = ['。', '.', '!', '！', '\n'];
    let end = after.find(STOPS).unwrap_or(after.len());
    let sentence = &after[..end];
    let start = lower[..at].rfind(STOPS).map_or(0, |stop| {
        stop + lower[stop..].chars().next().map_or(1, char::len_utf8)
    });
    // (Nor a habit reported with a question mark, as Chinese requests for help often end:
    // `每次都是训练600~1000steps之后会报错？`, every time it fails after 600–1000 steps.)
    let not_asked = [
        "为什么",
        "为何",
        "怎么",
        "why",
        "每次",
        "总是",
        "一直",
        "经常",
    ]
    .iter()
    .any(|word| lower[start..at].contains(word) || sentence.contains(word));
    !not_asked
        && sentence
            .find(['?', '？'])
            .is_some_and(|question| sentence[..question].contains('会'))
}

/// Korean's retrospective past after a stage word (`전에 학습이 돌아갔던 파라미터`, the parameters
/// with which training had run before; `학습했던 모델`): a past-tense syllable (final consonant
/// ㅆ, the merged `았`/`었`/`였`) followed by `던`, within the next few syllables. The stage
/// named is one that ran before, not the one that failed. (`학습하던 중`, while training, has
/// no past tense before `던`.)
fn korean_completed_past(after: &str) -> bool {
    let near: Vec<char> = after.chars().take(12).collect();
    near.windows(2).any(|pair| {
        let code = u32::from(pair[0]);
        let past = (0xAC00..=0xD7A3).contains(&code) && (code - 0xAC00) % 28 == 20;
        past && pair[1] == '던'
    })
}

/// What a loader of code fails to load (`Cannot load symbol cudnnCreateConvolutionDescriptor`,
/// `Unable to load any of {libcudnn_cnn.so.9.1.0, …}`, CTranslate2/cuDNN's dynamic loader
/// (`cudnn/dlopen` wrappers); TensorFlow's `Could not load dynamic library 'libcudart.so.11.0'`,
/// `stream_executor/platform/default/dso_loader.cc`; `unable to load shared library`): a
/// library or a symbol of one, not a model's weights.
pub(super) fn loads_a_library(after: &str) -> bool {
    let rest = after.trim_start();
    let first = rest
        .split_whitespace()
        .next()
        .unwrap_or_default()
        .trim_matches(|c: char| matches!(c, '\'' | '"' | '`' | ':' | ','));
    matches!(
        first,
        "symbol"
            | "symbols"
            | "library"
            | "libraries"
            | "dynamic"
            | "shared"
            | "dll"
            | "dlls"
            | "extension"
            | "kernel32"
            // A compiled kernel image the CUDA driver loads (XLA's `Failed to load in-memory
            // CUBIN: CUDA_ERROR_ILLEGAL_ADDRESS`, sokrypton/ColabFold#33; `cuModuleLoad` of a
            // PTX or fatbin).
            | "in-memory"
            | "cubin"
            | "ptx"
            | "fatbin"
    ) || rest.starts_with("any of {")
        || rest.starts_with("any of [")
        || (first.starts_with("lib") && (first.contains(".so") || first.contains(".dll")))
        || first.ends_with(".dll")
        || first.ends_with(".dylib")
}

/// Words that name a stage without placing this failure in it, whatever found them (a phrase,
/// the grammar, a script): advice opening with `Try` and no subject (`@IConquer96 Try to train
/// with smaller image sizes.`, `Try loading it in 8 bits`; `I try to train`, `when trying to
/// train` keep theirs), a function being defined (`def training_step(self, batch):`), or the
/// memory said to suffice for the stage (`Memory is enough for training by using zero-3, but OOM
/// occurred`).
pub(super) fn not_a_stage_reached(lower: &str, at: usize) -> bool {
    let before = lower[..at].trim_end();
    if before.split_whitespace().next_back() == Some("def") || before.ends_with("enough for") {
        return true;
    }
    let start = sentence_start(lower, at, &['.', '!', '?', ':', '\n', '。']);
    // The hit's own first word may be the `try` (`try to train`).
    let mut cut = (at + "try ".len()).min(lower.len());
    while !lower.is_char_boundary(cut) {
        cut += 1;
    }
    let head = &lower[start..cut];
    // The last `try` of the sentence up to the hit, at most three words before it.
    let Some(found) = head
        .rfind("try ")
        .filter(|&found| head[..found].is_empty() || head[..found].ends_with(char::is_whitespace))
    else {
        return false;
    };
    if head[found..].split_whitespace().count() > 4 {
        return false;
    }
    // What opens the imperative: nothing, an `@name` it is addressed to, a thread's `comment ·
    // 2019-04-22` header, or `please`.
    let opening = head[..found].trim_end();
    let last = opening.split_whitespace().next_back().unwrap_or("");
    opening.is_empty()
        || last == "please"
        || (last.starts_with('@') && last.len() > 1)
        || is_date(last)
}

/// A request's size (`with long context`, `long inputs`) said of a training in the same
/// sentence (`# Fail to train Qwen-3b with long context GRPO`, `fine-tuning with long
/// inputs`): the training's sequence length, a setting of its steps, not requests served.
fn request_size_of_a_training(lower: &str, at: usize, phrase: &str) -> bool {
    if !(phrase.contains("long ") || phrase.contains("long-")) {
        return false;
    }
    let head = &lower[sentence_start(lower, at, &['.', '!', '?', '\n', '。'])..at];
    [
        "train", "fine-tun", "finetun", "sft", "grpo", "dpo", "pretrain",
    ]
    .iter()
    .any(|word| head.contains(word))
}

/// A date as a thread's header writes it (`2019-04-22`).
fn is_date(word: &str) -> bool {
    let bytes = word.as_bytes();
    bytes.len() == 10
        && bytes.iter().enumerate().all(|(index, byte)| match index {
            4 | 7 => *byte == b'-',
            _ => byte.is_ascii_digit(),
        })
}

/// Where the sentence holding `at` starts: just after the last of `breaks` before it.
fn sentence_start(lower: &str, at: usize, breaks: &[char]) -> usize {
    lower[..at].rfind(breaks).map_or(0, |found| {
        found + lower[found..].chars().next().map_or(1, char::len_utf8)
    })
}
