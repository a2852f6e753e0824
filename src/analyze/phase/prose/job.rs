//! The training job or its stage: the corpus convention (tests/fixtures/corpus/AUDIT.md,
//! "Session 15: the job or the stage"). Training words with no word of time and the job's
//! set-up in their clause (`Training on T4:`, `A100（80G）*4 lora微调Qwen2-72B`, `我在微调example
//! 里面的…yaml示例`, `fine-tuning with DeepSpeed`) name the job, whose failure could equally come
//! while the model is loaded, sharded or wrapped, or its data prepared; words that place the
//! failure in the training's course (`during training`, `when training the model on a 4090`,
//! `训练过程中`, `使用9000条数据进行训练的时候`) or tie it to a per-step setting (`even with a batch
//! size of 16`, `如果output很长`) name the stage. A question put to another person (`请问您在训练的
//! 时候有没有遇到过…？`) is no stage of this failure.
//!
//! All offsets are byte offsets into one lowercase text; every slice is cut at a char boundary
//! (the ends of hits, of `match_indices` and of `char_indices`).

/// Clause breaks: ASCII `,` `;` `!` `?` and newline always, `.` and `:` before a space or the end
/// (not `qwen2.5`, `12:30`), and the CJK full-width marks.
fn breaks_clause(lower: &str, at: usize, c: char) -> bool {
    match c {
        ',' | ';' | '!' | '?' | '\n' | '，' | '。' | '；' | '：' | '！' | '？' | '、' => {
            true
        }
        '.' | ':' => lower[at + c.len_utf8()..]
            .chars()
            .next()
            .is_none_or(char::is_whitespace),
        _ => false,
    }
}

/// Sentence breaks: `.` before a space or the end, `!`, `?`, newline and the CJK marks.
fn breaks_sentence(lower: &str, at: usize, c: char) -> bool {
    match c {
        '!' | '?' | '\n' | '。' | '！' | '？' => true,
        '.' => lower[at + 1..]
            .chars()
            .next()
            .is_none_or(char::is_whitespace),
        _ => false,
    }
}

/// The span around `at..end` up to the breaks that `breaks` names.
fn span(
    lower: &str,
    at: usize,
    end: usize,
    breaks: fn(&str, usize, char) -> bool,
) -> (usize, usize) {
    let start = lower[..at]
        .char_indices()
        .rev()
        .find(|&(i, c)| breaks(lower, i, c))
        .map_or(0, |(i, c)| i + c.len_utf8());
    let stop = lower[end..]
        .char_indices()
        .find(|&(i, c)| breaks(lower, end + i, c))
        .map_or(lower.len(), |(i, _)| end + i);
    (start, stop)
}

/// ASCII words of a text (letters, digits, `-`, `_`, `+`): `4xa100`, `rtx3090`, `qwen2_5vl`.
fn ascii_words(text: &str) -> impl Iterator<Item = &str> {
    text.split(|c: char| !(c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '+')))
        .filter(|word| !word.is_empty())
}

/// A GPU or an accelerator named by its model (`a100`, `8xa100`, `40ga100`, `rtx3090`, `4090`,
/// `2080ti`, `t4`): what the job ran on. (Not `gpu`, `card`, `device`: a training's words name
/// them with the stage as often as with the job; measured on the corpus.)
fn names_hardware(word: &str) -> bool {
    const MODELS: &[&str] = &[
        "a100", "a800", "h100", "h800", "h200", "h20", "v100", "p100", "a6000", "a5000", "a4000",
        "l40", "l40s", "a10", "a10g", "l4", "t4", "k80", "mi250", "mi300", "mi300x",
    ];
    // A count or a memory size before the model (`8xa100`, `4x`, `40ga100`, `80gb`), a brand
    // (`rtx3090`, `gtx1080`).
    let counted = word.trim_start_matches(|c: char| c.is_ascii_digit());
    let stripped = [
        Some(word),
        Some(counted),
        counted.strip_prefix('x'),
        counted.strip_prefix("gb"),
        counted.strip_prefix('g'),
    ];
    stripped.into_iter().flatten().any(|bare| {
        let bare = bare
            .strip_prefix("rtx")
            .or_else(|| bare.strip_prefix("gtx"))
            .unwrap_or(bare);
        MODELS.contains(&bare) || geforce_number(bare)
    })
}

/// A GeForce number: four digits from 1050 to 5090 whose third is 5 to 9 and last is 0
/// (`1660`, `3090`, `4060`), with `ti` or `s` (`2080ti`); not a round count (`2000`, `1024`).
fn geforce_number(word: &str) -> bool {
    let digits = word.trim_end_matches("ti").trim_end_matches('s');
    let bytes = digits.as_bytes();
    bytes.len() == 4
        && bytes.iter().all(u8::is_ascii_digit)
        && (b'1'..=b'5').contains(&bytes[0])
        && (b'5'..=b'9').contains(&bytes[2])
        && bytes[3] == b'0'
}

/// Words that name the job's set-up: a training tool or method, a launcher, a script, a
/// config, a dataset (whole words).
const SET_UP_WORDS: &[&str] = &[
    "deepspeed",
    "fsdp",
    "zero2",
    "zero3",
    "peft",
    "llamafactory",
    "llama-factory",
    "axolotl",
    "unsloth",
    "torchrun",
    "accelerate",
    "megatron",
    "colossalai",
    "script",
    "command",
    "config",
    "dataset",
    "samples",
    // A recipe or a tutorial followed as given (`train a model using the librispeech recipe`).
    "recipe",
    "tutorial",
];
const SET_UP_SUFFIXES: &[&str] = &[".yaml", ".yml", ".json", ".py", ".sh", ".toml"];

/// Whether the clause names the job's set-up (a GPU model, a tool, a script, a config, a
/// dataset). (Not CJK words such as `使用` / `显卡`, nor a GPU named only as `gpu` / `card`: on
/// the corpus they named the stage's context as often as the job.)
pub(super) fn names_a_set_up(clause: &str) -> bool {
    ascii_words(clause).any(|word| SET_UP_WORDS.contains(&word) || names_hardware(word))
        || SET_UP_SUFFIXES.iter().any(|suffix| clause.contains(suffix))
}

/// Settings of one step that the failure is tied to (`even with a batch size of 16`,
/// `max_len`, `如果output很长`): a step's activations grow with them, a model's load does not.
const PER_STEP: &[&str] = &[
    "batch",
    "max_len",
    "max_length",
    "seq_len",
    "sequence length",
    "seq length",
    "context length",
    "cutoff_len",
    "resolution",
    "image size",
    "image_size",
    "长度",
    "过长",
    "很长",
    "太长",
];

/// Whether the sentence ties the failure to a per-step setting.
pub(super) fn per_step_setting(sentence: &str) -> bool {
    PER_STEP.iter().any(|word| sentence.contains(word))
}

/// Whether the training hit `at..end` of `lower` names the job rather than the stage: no word
/// of time places the failure in it (`during`, `while`, `when`, `时`, `的时候`, `过程中`, `中`), and
/// its clause names the job's set-up (`Training on T4:`, `A100*4 lora微调Qwen2-72B`,
/// `4060移动版训练也报显存`, `微调example里面的…yaml示例`). A per-step setting in the sentence keeps
/// it the stage.
///
/// Not the job (the corpus labels read them as the stage): the reporter as the doer (`when I
/// train X`), their intent (`trying to fine-tune`) and the run's start (`when the training
/// starts`) — the labels file such words under the stage more often than not.
pub(super) fn names_the_job(lower: &str, at: usize, end: usize) -> bool {
    let (sentence_start, sentence_end) = span(lower, at, end, breaks_sentence);
    if per_step_setting(&lower[sentence_start..sentence_end]) {
        return false;
    }
    let hit_words: Vec<&str> = ascii_words(&lower[at..end]).collect();
    // A word of time places the failure in the training whatever its set-up (`during training
    // on 8 GPUs`, `when training the detector on a 4090`, `使用9000条数据进行训练的时候`).
    if placed_in_time(lower, at, end, &hit_words) {
        return false;
    }
    let (clause_start, clause_end) = span(lower, at, end, breaks_clause);
    names_a_set_up(&lower[clause_start..clause_end])
}

/// Whether the hit is a time the failure came in: English `during` / `while` / `when` /
/// `whenever` / `in` / `at` opening it, or a CJK word of time after it (`时`, `的时候`, `过程中`,
/// `中`, `時`, `중`, `할 때`, `하는데`, `の際`).
fn placed_in_time(lower: &str, at: usize, end: usize, hit_words: &[&str]) -> bool {
    const AFTER: &[&str] = &[
        "时",
        "的时候",
        "的時候",
        "時",
        "过程",
        "過程",
        "中",
        "途中",
        "중",
        "할 때",
        "할때",
        "하는",
        "하던",
        "하다가",
        "の際",
        "際",
    ];
    let first = hit_words.first().copied();
    let english = matches!(
        first,
        Some("during" | "while" | "when" | "whenever" | "in" | "at" | "upon")
    );
    let rest = lower[end..].trim_start();
    // A parenthesis of the job's settings between the stage and its word of time (`GRPO训练
    // （62k， max_prompt_length=60k）的时候报错`): the word of time after it.
    let after_settings = ['（', '(']
        .iter()
        .find(|open| rest.starts_with(**open))
        .and_then(|open| {
            let close = if *open == '（' { '）' } else { ')' };
            rest.find(close)
                .map(|at| rest[at + close.len_utf8()..].trim_start())
        });
    let cjk = !lower[at..end].is_ascii() || rest.starts_with(|c: char| !c.is_ascii());
    if english
        || cjk
            && AFTER.iter().any(|word| {
                rest.starts_with(word)
                    || after_settings.is_some_and(|after| after.starts_with(word))
            })
    {
        return true;
    }
    // The object between (`训练PPO的时候`, `微调一个模型时`): a word of time later in the clause.
    let (_, clause_end) = span(lower, at, end, breaks_clause);
    let clause_rest = &lower[end..clause_end];
    let hour = |c: Option<char>| matches!(c, Some('间' | '間' | '代' | '刻'));
    cjk && (["时候", "時候", "过程中", "過程中", "期间"]
        .iter()
        .any(|word| clause_rest.contains(word))
        || clause_rest.char_indices().any(|(i, c)| {
            matches!(c, '时' | '時') && !hour(clause_rest[i + c.len_utf8()..].chars().next())
        }))
}

/// Whether the hit `at..end` stands in a question put to another person (`请问您在训练的时候有没有
/// 遇到过…？`, `@user 请问您是在使用PaddleCloud训练吗？`, `did you get an OOM while training?`),
/// or one that asks for a way to do something (`Or is there a way to directly give a value for
/// `max_memory` when loading the model ?`, `how can I set it when training?`): not the reporter's
/// stage.
pub(super) fn asks_another(lower: &str, at: usize, end: usize) -> bool {
    let (start, stop) = span(lower, at, end, breaks_sentence);
    // (The hit may hold the question mark a space kept apart: `when loading the model ?`.)
    let question = lower[stop..].starts_with(['?', '？']) || lower[at..end].contains(['?', '？']);
    if !question {
        return false;
    }
    let before = lower[start..at].replace("你好", "").replace("您好", "");
    let addressed = before.contains('您')
        || before.contains('你')
        || ascii_words(&before).any(|word| matches!(word, "you" | "your"));
    let opening = before
        .trim_start()
        .trim_start_matches("or ")
        .trim_start_matches("and ")
        .trim_start();
    let asks_a_way = [
        "is there a way",
        "is there any way",
        "is there an option",
        "is it possible",
        "how can i",
        "how can we",
        "how do i",
        "how do we",
        "can i ",
        "can we ",
    ]
    .iter()
    .any(|words| opening.starts_with(words));
    addressed || asks_a_way
}

#[cfg(test)]
mod tests {
    use super::*;

    fn job(text: &str, hit: &str) -> bool {
        let lower = text.to_lowercase();
        let at = lower.find(hit).expect("hit in text");
        names_the_job(&lower, at, at + hit.len())
    }

    #[test]
    fn the_set_up_without_a_word_of_time_names_the_job() {
        assert!(job("Training on V100:", "training on "));
        assert!(job("4xA800 lora微调一个70B模型，显存溢出", "微调"));
        assert!(job("单卡4090进行微调，出现OOM", "微调"));
        assert!(job("我在微调readme里的config.yaml，报OOM", "微调"));
        assert!(job(
            "i am trying to train a model using the librispeech recipe, just to understand the flow.",
            "train"
        ));
        assert!(job(
            "fine-tuning with deepspeed zero3 gives OOM",
            "fine-tuning with "
        ));
        // No set-up named: the words still name the stage.
        assert!(!job("训练也报显存不足", "训练"));
        assert!(!job("Training OOM", "training"));
    }

    #[test]
    fn a_span_of_time_a_moment_or_a_per_step_setting_name_the_stage() {
        assert!(!job(
            "CUDA OOM during training on 8 GPUs",
            "during training"
        ));
        assert!(!job(
            "OOM while training the merged model",
            "while training"
        ));
        assert!(!job(
            "memory error when training the detector",
            "when training"
        ));
        assert!(!job(
            "OOM when fine-tuning phi-2 on 2x3090",
            "when fine-tuning"
        ));
        assert!(!job(
            "OOM when I train with ZeRO on two cards",
            "when i train"
        ));
        assert!(!job("用8张卡使用QLoRA微调一个模型的时候报OOM", "微调"));
        assert!(!job("训练过程中显存不足", "训练"));
        assert!(!job("在训练模型的时候报错", "训练"));
        assert!(!job(
            "Training on V100 with batch size 64: OOM",
            "training on "
        ));
        assert!(!job("如果序列很长，微调时就会报OOM", "微调"));
    }

    #[test]
    fn no_panic_at_any_char_boundary() {
        let lower = "训练时。a100，when i train: qwen2.5 时候？ 你 ё 학습 중 .".to_string();
        let bounds: Vec<usize> = lower
            .char_indices()
            .map(|(i, _)| i)
            .chain([lower.len()])
            .collect();
        for &at in &bounds {
            for &end in bounds.iter().filter(|&&end| end >= at) {
                let _ = names_the_job(&lower, at, end);
                let _ = asks_another(&lower, at, end);
            }
        }
    }

    #[test]
    fn hardware_is_read_from_model_names() {
        for word in [
            "a100", "8xa100", "40ga100", "rtx3090", "gtx1080", "4090", "2080ti", "t4",
        ] {
            assert!(names_hardware(word), "{word}");
        }
        for word in [
            "2024", "1024", "2000", "t5", "model", "10000", "7b", "gtx", "gpu",
        ] {
            assert!(!names_hardware(word), "{word}");
        }
    }

    #[test]
    fn a_question_put_to_another_is_not_the_reporters_stage() {
        let asks = |text: &str, hit: &str| {
            let lower = text.to_lowercase();
            let at = lower.find(hit).unwrap();
            asks_another(&lower, at, at + hit.len())
        };
        assert!(asks("请问你们在训练的时候有没有遇到过显存不足？", "训练"));
        assert!(asks("请问您是在集群上训练吗？", "训练"));
        assert!(asks("Did you see OOM while training?", "while training"));
        assert!(!asks("你好，我在训练的时候显存不足，怎么办？", "训练"));
        assert!(!asks("OOM while training, why?", "while training"));
        // Char boundaries: a hit at the very start and end.
        assert!(!asks("训练", "训练"));
    }
}
