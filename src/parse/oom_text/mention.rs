//! A GPU OOM named in words, without its message: an issue title, a sentence, an app's own
//! line (`CUDA out of memory` in a title, `running into OOM issues`, 显存不足, ComfyUI's "Got an
//! OOM"). Held like an exception's class: any message that follows replaces it.

use super::{find, Family};
use crate::model::failure::{OomFigures, OomKind, OomMessage};

/// PyTorch's words named without the message: an issue title or a sentence (`"torch.cuda.
/// OutOfMemoryError: CUDA out of memory" when deploy…`, `GPU usage 0% | cuda out of memory`,
/// `WSL Cuda out of Memory when Trying to Load GGUF Model`). The allocator's own message
/// always goes on with `. Tried to allocate` and is read by `pytorch::start` first. A mention
/// is held like an exception's class ([`Pending`]): any message that follows replaces it, so
/// it only counts when the text has nothing better (a paste cut before the exception line).
///
/// ComfyUI says so in its own words when it catches one: `comfy/sd.py` `VAE.decode` logs
/// "Warning: Ran out of memory when regular VAE decoding, retrying with tiled VAE decoding."
/// (Fooocus keeps the line in its copy, `ldm_patched/modules/sd.py`), and `execution.py` logs
/// "Got an OOM, unloading all loaded models." before it reports the node's error.
pub(super) fn mention_start(text: &str) -> Option<(Family, usize)> {
    // ggml's pinned host buffer refused (`ggml_cuda_host_malloc: failed to allocate 31393.86
    // MiB of pinned memory: out of memory`, `ggml-cuda.cu`): a warning about the host's memory,
    // after which ggml takes pageable memory instead (`cuda::start_fallback` skips it too).
    if names_a_topic(text) || text.contains("of pinned memory") {
        return None;
    }
    // Flower's crash banner (`flwr/simulation/app.py` `ERROR_MESSAGE_START_SIMULATION`, 1.x:
    // `Your simulation crashed :(. This could be because of several reasons.` then `- You
    // clients hit an out-of-memory (OOM) error and actors couldn't recover from it.`): one cause
    // in its list of possible ones, printed for any crash of the simulation.
    if text.contains("actors couldn't recover from it") {
        return None;
    }
    if let Some(position) = APP_MENTIONS.iter().find_map(|words| find(text, words)) {
        return Some((Family::OtherGpu, position));
    }
    if let Some(position) = oom_word(text) {
        return Some((Family::OtherGpu, position));
    }
    if let Some(position) = prose_mention(text) {
        return Some((Family::OtherGpu, position));
    }
    if let Some(position) = cjk_mention(text).or_else(|| european_mention(text)) {
        return Some((Family::OtherGpu, position));
    }
    if let Some(position) = device_mention(text) {
        return Some((Family::OtherGpu, position));
    }
    if let Some(position) = malloc_mention(text).or_else(|| class_mention(text)) {
        return Some((Family::OtherGpu, position));
    }
    gpu_memory_mention(text)
        .or_else(|| weak_mention(text))
        .map(|position| (Family::OtherGpu, position))
}

/// A guide's heading or a topic named, not a failure (`### CUDA Out of Memory Solutions`, `OOM
/// troubleshooting`, `CUDA OOM tips`): the out-of-memory words followed by what is written about
/// them.
fn names_a_topic(text: &str) -> bool {
    const TOPIC: [&str; 9] = [
        "solutions",
        "solution",
        "tips",
        "guide",
        "troubleshooting",
        "faq",
        "checklist",
        "explained",
        "fixes",
    ];
    let lower = text.to_ascii_lowercase();
    ["out of memory", "oom"].iter().any(|words| {
        lower.match_indices(words).any(|(at, _)| {
            let mut rest = lower[at + words.len()..].split_whitespace();
            let mut next = rest.next().unwrap_or("");
            if matches!(next, "error" | "errors") {
                next = rest.next().unwrap_or("");
            }
            TOPIC.contains(&next.trim_end_matches([':', '.', '?', '!']))
        })
    })
}

/// An out-of-memory failure named with no word of whose memory: an issue's title or the
/// reporter's sentence (`OOM when training`, `I still facing OOM`, `OOM with long context`,
/// `I always get "Out of Memory" even after the last step`). It says nothing of GPU or host by
/// itself, so the detector holds it ([`is_weak`]) and makes it a GPU OOM only when the lines
/// after it show GPU work and no host memory ([`gpu_work_shown`], [`host_memory_shown`]), and
/// no message of its own follows. Not advice, a negation, a question, or a bug fixed in the
/// past (`to avoid OOM`, `no OOM anymore`, `Is it OOM?`, `this used to OOM before 0.5`), and
/// not the host's words on the same line (`OOM killer`, `RAM`).
fn weak_mention(line: &str) -> Option<usize> {
    // The words read, offloading left out; positions found in them index their lower-cased
    // copy too (`lowercase_in_place`).
    let text = without_offload(line);
    let text = text.as_str();
    let lower = lowercase_in_place(text);
    let at = oom_positions(text)
        .into_iter()
        .find(|&at| {
            // A CJK sentence glues its words to `OOM` (`运行示例代码，报OOM`): only an ASCII
            // letter or digit makes it part of another word.
            let before = text[..at].chars().next_back();
            let after = text[at + 3..].chars().next();
            before.is_none_or(|c| !c.is_ascii_alphanumeric())
                && (after.is_none_or(|c| !(c.is_ascii_alphanumeric() || c == '-' || c == '_'))
                    || oom_verb(&text[at + 3..]).is_some())
        })
        .or_else(|| {
            regex!(r"out[ -]of[ -]memory")
                .find(&lower)
                .map(|m| m.start())
        })
        .or_else(|| bare_class(&lower))
        .or_else(|| not_enough_memory(&lower))
        .or_else(|| russian_short_of_memory(&lower))?;
    if asks_whether(&lower, at) || speculates_after(&lower, at) {
        return None;
    }
    // Chinese advice or a negation glued before it (`调小batch可以避免OOM`, `不会OOM`).
    if cjk_denied(text.get(..at).unwrap_or("")) {
        return None;
    }
    if program_subject(&lower, at) {
        return None;
    }
    // ASCII words: a CJK sentence glues them to its own (`CPU直接跑满`).
    let words: Vec<&str> = lower
        .split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .collect();
    if HOST_WORDS.iter().any(|word| words.contains(word))
        || words.contains(&"oom_killer")
        || lower.contains("system memory")
        || lower.contains("java")
        || lower.contains("kill")
        // gperftools' host allocator warning of a large request (`tcmalloc: large alloc
        // 2617409536 bytes`, Colab's runtime), session 48.
        || lower.contains("tcmalloc")
        || ray_oom(&lower)
    {
        return None;
    }
    let recent = last_words(&lower[..at.min(lower.len())], 4);
    const PAST: [&str; 4] = ["used", "previously", "fixed", "any"];
    if recent.iter().any(|word| {
        MENTION_DENY.contains(word)
            || ADVICE.contains(word)
            || PAST.contains(word)
            || LESS.contains(word)
    }) {
        return None;
    }
    let after = &lower[at.min(lower.len())..];
    if [
        "anymore",
        "any more",
        "no longer",
        "was fixed",
        "is fixed",
        "been fixed",
    ]
    .iter()
    .any(|words| after.contains(words))
    {
        return None;
    }
    Some(line.len() - line.trim_start().len())
}

/// `Not enough memory` said with no word of whose memory and no figure: SGLang's refusal
/// (`Not enough memory. Please try to increase --mem-fraction-static.`,
/// `sglang/srt/model_executor/model_runner.py`) or TGI's (`Not enough memory to handle …`)
/// named in an issue title or a sentence without the message. Windows' `Not enough memory
/// resources are available to process this command` and the engines' own messages (read by
/// their families first) are not this.
fn not_enough_memory(lower: &str) -> Option<usize> {
    let found = regex!(r"(?:^|[^a-z0-9_])(not enough memory)(?:$|[^a-z0-9_])").captures(lower)?;
    let words = found.get(1)?;
    let rest = &lower[words.end()..];
    let resources = rest.trim_start().starts_with("resources");
    (!resources).then_some(words.start())
}

/// Memory running short in a Russian title or sentence (lower-cased) with no word of whose
/// memory: `нехватка памяти` (a shortage of memory), `ошибка нехватки памяти`, `не хватает
/// памяти` / `не хватило памяти` (not enough memory), `недостаточно памяти`, `закончилась
/// память` (the memory ran out). Held like `out of memory` until the lines after it show GPU
/// work ([`gpu_work_shown`]). Not the host's memory named beside it: `оперативной памяти`
/// (RAM), `ОЗУ`, `RAM`, `подкачки` (swap) (the GPU's own, `видеопамяти`, is
/// [`european_mention`]'s).
fn russian_short_of_memory(lower: &str) -> Option<usize> {
    let found = regex!(r"(?:нехватк\w*|не\s+хват(?:ает|ило|ат)|недостаточно|не\s+достаточно)\s+памяти|памяти\s+не\s+хват(?:ает|ило|ат)|(?:за)?кончил(?:ась|ось)\s+память|память\s+(?:за)?кончилась")
        .find(lower)?;
    let host = regex!(r"оперативн\w*|\bозу\b|подкачк\w*|\bram\b|\bswap\b|\bцп\b").is_match(lower);
    (!host).then_some(found.start())
}

/// The OOM class named bare in a title or a sentence (lower-cased), without its module or
/// message (`OutOfMemoryError for LLaMa-2 70b running on …`): PyTorch's `torch.OutOfMemoryError`,
/// but also Java's heap (`java.lang.OutOfMemoryError`, which [`weak_mention`] turns away by
/// its `java`) or Ray's, so held like `OOM` until the lines after it show GPU work. Not a
/// traceback's class line (`OutOfMemoryError: …`, `OutOfMemoryError  Traceback`, read by the
/// families) nor one with its module (`torch.…`, [`class_mention`]).
fn bare_class(lower: &str) -> Option<usize> {
    // (Or a Chinese title's words after it: `OutOfMemoryError 云端3090训练sdxlLora报错`.)
    if let Some(found) = regex!(r"(?:^|[\s(\[])outofmemoryerrors?\s+(?:[a-z]|\p{Han})").find(lower)
    {
        return Some(found.start() + found.as_str().find('o').unwrap_or(0));
    }
    // Or the object of a verb that hit it, wherever the sentence ends (`but got
    // OutOfMemoryError.`, session 48), or TensorFlow's class so (`the model throws a
    // ResourceExhaustedError after the predictions`, session 49).
    let found = regex!(
        r"(?:^|[^a-z])(?:got|get|gets|getting|encounter(?:ed|ing|s)?|hit|hits|throws?|threw|raised?|raises)\s+(?:an?\s+)?(outofmemoryerror|resourceexhaustederror)(?:$|[^a-z])"
    )
    .captures(lower)?;
    found.get(1).map(|class| class.start())
}

/// A program's own pool named as what ran out (SGLang's `alloc_req_slots runs out of memory`:
/// its request slots, not the GPU): that program's message, not the reporter's words.
fn program_subject(lower: &str, at: usize) -> bool {
    let heading = lower.trim_start().starts_with("# ");
    let subject = lower[..at.min(lower.len())]
        .split_whitespace()
        .rev()
        .find(|word| {
            !matches!(*word, "runs" | "run" | "ran" | "running" | "is" | "was")
                // An opening bracket alone in a title (`# Batch images (out of memory)
                // error`) is no subject; elsewhere it is a message's own tail (`… would exceed
                // allowed memory. (out of memory)`).
                && (word.chars().any(char::is_alphanumeric) || !heading)
        });
    // A version names the program, not a pool of it (`vllm 0.8.5.dev468+g98834fefa.precompiled
    // OOM on Qwen3-32B`).
    let version = |word: &str| {
        word.trim_start_matches('v')
            .starts_with(|c: char| c.is_ascii_digit())
    };
    // A dot between digits is a model's size or version (`qwen2.5-vl-72b oom in 4 A100`), not
    // an attribute (`self.cache`).
    let attribute = |word: &str| {
        let bytes = word.as_bytes();
        bytes.windows(3).any(|w| {
            w[1] == b'.'
                && (w[0].is_ascii_alphabetic() || w[0] == b'_')
                && w[2].is_ascii_alphabetic()
        })
    };
    subject
        .is_some_and(|word| (word.contains(['_', '(', ')']) || attribute(word)) && !version(word))
}

/// Whether a mention is an app's own line after an out-of-memory it caught ([`APP_MENTIONS`]).
pub(super) fn is_app_line(text: &str) -> bool {
    APP_MENTIONS.iter().any(|words| find(text, words).is_some())
}

/// Whether a held mention is one of [`weak_mention`]'s: none of the other readings takes it.
pub(super) fn is_weak(text: &str) -> bool {
    weak_mention(text) == Some(0)
        && !is_app_line(text)
        && oom_word(text).is_none()
        && prose_mention(text).is_none()
        && cjk_mention(text).is_none()
        && european_mention(text).is_none()
        && device_mention(text).is_none()
        && malloc_mention(text).is_none()
        && class_mention(text).is_none()
        && gpu_memory_mention(text).is_none()
}

/// A line showing GPU work: a GPU, its runtime or libraries (`CUDA`, `cu118`, `cuDNN`, `NCCL`,
/// `torch`), a GPU engine, `nvidia-smi`, a data-centre or gaming card, a 显卡 (graphics card).
///
/// Or the device set-up of a distributed job and an engine's model placement in its own log
/// lines: `CUDA_VISIBLE_DEVICES`, Lightning's `LOCAL_RANK: 0 - CUDA_VISIBLE_DEVICES: […]`,
/// vLLM's `Loading model weights took 19.9073 GB` and
/// `Starting profile run for multi-modal models.` (`vllm/worker/model_runner.py`,
/// `enc_dec_model_runner.py`), `Loading safetensors checkpoint shards`.
///
/// Or JAX/XLA (`jax`, `jaxlib`, `flax`, `xla`, a `tpu`): they place a program on an
/// accelerator, and an XLA out-of-memory is the accelerator's (`RESOURCE_EXHAUSTED`). Or a
/// network's `backward pass` / `forward pass` named as where it ran out: autograd's activations
/// and gradients, the memory of a training step on an accelerator.
pub(super) fn gpu_work_shown(line: &str) -> bool {
    let lower = line.to_ascii_lowercase();
    has_gpu_word(&lower)
        || regex!(r"(?:^|[^a-z0-9_])(?:nvidia|nvidia-smi|geforce|radeon|tesla|cudnn|nccl|cu1[0-2]\d|torch|pytorch|vllm|sglang|text_generation_launcher|text_generation_server|text-generation-inference|tensorrt|deepspeed|megatron|[ahl]40s?|a800|h800|h20|v100|t4|l4|p100|4090|3090|mi\d{3}x?|cuda_visible_devices|local_rank|\[rank\d+\]|loading model weights took|profile run|safetensors checkpoint shards|jax|jaxlib|flax|xla|tpu|(?:backward|forward) pass(?:es)?)(?:$|[^a-z0-9_])")
            .is_match(&lower)
        || line.contains("显卡")
        // Russian `видеокарта` (graphics card, any case: `видеокарты`, `Видеокарта`).
        || line.contains("идеокарт")
        // 显存, the GPU's memory (`显存报错如下`), and CUDA's own identifiers in a C++ stack or
        // a setting (`CUDAAllocator`, `cudaMalloc`, `CUDAPlace(0)`).
        || line.contains("显存")
        || regex!(r"(?:^|[^A-Za-z0-9_])(?:cuda|CUDA)[A-Z_a-z]").is_match(line)
}

/// A line showing the host's memory running out in words a message would not carry:
/// `system RAM`, `out of RAM`, `swap`, the OOM killer, a kill.
pub(super) fn host_memory_shown(line: &str) -> bool {
    let lower = line.to_ascii_lowercase();
    regex!(r"(?:^|[^a-z0-9_])(?:(?:out of|system|cpu|host) ram|ram (?:usage|is full|fills|filled|ran out)|swap|oom[ _-]?killer|oom-kill|oomkilled|killed|sigkill|host memory|system memory|cpu memory|memoryerror|bad_alloc|tcmalloc)(?:$|[^a-z0-9_])")
        .is_match(&lower)
        // Chinese names the host's memory 内存 (the GPU's is 显存): `cpu内存`, `系统内存`, or
        // `内存OOM` said of no card (`发现出现了内存OOM`; not `显卡内存`, `GPU内存`).
        || regex!(r"(?:cpu|系统|主机)\s?内存|(?:^|[^a-z卡])内存\s?oom").is_match(&lower)
}

/// A line showing the host's memory failing, not only named (`signal: killed`, `OOM killer`,
/// `out of RAM`, `MemoryError`): what [`host_memory_shown`] reads without the words a
/// machine's specification also carries (`RAM: 40GB`, `SWAP: 25GB`, `system memory`).
pub fn host_failure_shown(line: &str) -> bool {
    let lower = line.to_ascii_lowercase();
    regex!(r"(?:^|[^a-z0-9_])(?:out of ram|ram (?:is full|fills|filled|ran out)|oom[ _-]?killer|oom-kill|oomkilled|killed|sigkill|memoryerror|bad_alloc)(?:$|[^a-z0-9_])")
        .is_match(&lower)
}

/// Whether a line names the GPU or its memory in words of its own (`GPU`, `CUDA`, `VRAM`, a
/// card, 显存): a mention that says so is the GPU's, whatever message follows it.
pub fn names_the_gpu(line: &str) -> bool {
    has_gpu_word(&line.to_ascii_lowercase()) || line.contains("显存") || line.contains("显卡")
}

/// A GPU's memory running out in the reporter's words, without the error's wording: `It ran
/// out of VRAM as soon as I generated …`, `Ollama runs out of GPU memory with two models
/// loaded`, or `out of memory` said of a job with a GPU named in the same sentence (`The GPU ran
/// out of memory when I loaded the 70B model`, `Training fails with out of memory on A100`).
/// Not advice, a negation or a question whether (`To avoid running out of VRAM, use
/// --lowvram`, `Is this an out of memory problem?`), and not the host's memory (`ran out of
/// RAM`, `killed`). The position of the line's first word: the whole sentence is the mention.
fn gpu_memory_mention(text: &str) -> Option<usize> {
    let lower = memory_typos_mended(without_offload(text).to_lowercase());
    const GPU_MEMORY: [&str; 19] = [
        "out of vram",
        "out of gpu memory",
        // (`I get a "RuntimeError: Out of CUDA memory" error`.)
        "out of cuda memory",
        "out of gpu ram",
        "out of video memory",
        "out of graphics memory",
        "out of device memory",
        // Left short of it: `LMstudio claims not enough VRAM to load models`.
        "not enough vram",
        "not enough gpu memory",
        "not enough cuda memory",
        "not enough video memory",
        "insufficient vram",
        "insufficient gpu memory",
        "insufficient cuda memory",
        // (`I get an error about the lack of video memory`.)
        "lack of vram",
        "lack of gpu memory",
        "lack of video memory",
        "shortage of vram",
        "shortage of gpu memory",
    ];
    // The words the other way round, as many reporters write them (`8*RTX 3090, batchsize=256,
    // cuda memory not enough`, `GPU memory is insufficient`).
    let after_memory =
        regex!(r"(?:gpu|cuda|video|vram) memory (?:is |was )?(?:not enough|insufficient)")
            .find(&lower)
            .map(|found| found.start());
    let named = GPU_MEMORY
        .iter()
        .filter_map(|words| lower.find(words))
        .chain(after_memory)
        .min();
    let at = named.or_else(|| {
        let at = regex!(r"out[ -]of[ -]memory").find(&lower)?.start();
        has_gpu_word(&lower).then_some(at)
    })?;
    let before = &lower[..at];
    let recent: Vec<&str> = before
        .split_whitespace()
        .rev()
        .take(4)
        .map(|word| word.trim_matches(|c: char| !c.is_alphanumeric()))
        .collect();
    let denied = recent
        .iter()
        .any(|word| MENTION_DENY.contains(word) || ADVICE.contains(word));
    // The host's words count in the mention's own sentence when that sentence names the GPU
    // (`The 4090 setup raised an out-of-memory error. I tried … offloading portions of the model
    // to CPU`: the offload is another sentence's), in the whole line otherwise.
    let sentence = sentence_around(&lower, at);
    let scope = if has_gpu_word(sentence) {
        sentence
    } else {
        lower.as_str()
    };
    let words: Vec<&str> = scope
        .split(|c: char| !(c.is_alphanumeric() || c == '_'))
        .filter(|word| !word.is_empty())
        .collect();
    // A face swap (`reactor face swap node … after completing the swap process leading to out
    // of memory`) is no swap space.
    let face_swap = scope.contains("face swap") || scope.contains("faceswap");
    let host = words
        .iter()
        .any(|word| HOST_WORDS.contains(word) && !(*word == "swap" && face_swap))
        || ray_oom(scope);
    let program = named.is_none() && program_subject(&lower, at);
    (!denied && !host && !program && !asks_whether(&lower, at) && !speculates_after(&lower, at))
        .then_some(text.len() - text.trim_start().len())
}

/// Whether the clause after a mention speculates instead of reporting (`Out of VRAM message
/// might be misleading`, `… running out of GPU memory may be the cause`): `might`, `may` or
/// `could` within the next few words of its sentence.
fn speculates_after(lower: &str, at: usize) -> bool {
    let clause = lower[at..]
        .split(['.', '!', '?', ';', ','])
        .next()
        .unwrap_or("");
    clause
        .split_whitespace()
        .skip(3)
        .take(5)
        .any(|word| matches!(word, "might" | "may" | "could"))
}

/// Words of advice just before a mention (`to prevent running out of VRAM`, `reduces the
/// chance of running out of GPU memory`).
const ADVICE: [&str; 8] = [
    "prevent", "prevents", "reduce", "reduces", "chance", "risk", "might", "may",
];

/// `Ray OOM`: Ray's memory monitor, which kills workers when the node's host memory runs low
/// (`ray.exceptions.OutOfMemoryError: Task was killed due to the node running low on memory`).
fn ray_oom(lower: &str) -> bool {
    regex!(r"(?:^|[^a-z0-9_])ray oom").is_match(lower)
}

/// Words for the host's memory, whole words of a lower-cased sentence.
const HOST_WORDS: [&str; 9] = [
    "ram", "cpu", "host", "swap", "heap", "killed", "disk", "shm", "dmesg",
];

/// A GPU named in a lower-cased sentence, as a whole word: the device, its memory, its
/// runtime, or a data-centre or gaming card.
/// A count of cards before the name (`2x3090`, `8xH100`) or a card named by its memory (`on a
/// 24GB card`) counts too.
fn has_gpu_word(lower: &str) -> bool {
    regex!(r"(?:^|[^a-z0-9_]|\dx)(?:gpus?|cuda|vram|rocm|mps|graphics card|video card|rtx|gtx|geforce|radeon|tesla|[ahlpv]100|[ah]800|h200|h20|a6000|a10g?|l40s?|[lt]4|[2-5]0[6-9]0(?:\s?ti)?|\d+\s?gb (?:cards?|gpus?))(?:$|[^a-z0-9_])")
        .is_match(lower)
}

/// `memory` as reporters mistype it in a title (`CUDA out of memeory issue`, six times in the
/// corpus; `they both out of mermory using 8*4090`, `out of memoty`), mended in lower-cased
/// text: the same length or shorter, so a position before the typo still points at the same
/// byte. A word after `out of` that starts as `memory` does and is two edits from it, six to
/// eight letters long, is read as `memory` (padded with spaces to its length).
fn memory_typos_mended(lower: String) -> String {
    let mut lower = if lower.contains("memeory") {
        lower.replace("memeory", "memory")
    } else {
        lower
    };
    if !lower.contains("out of me") {
        return lower;
    }
    let typos: Vec<(usize, usize)> = lower
        .match_indices("out of me")
        .filter_map(|(at, _)| {
            let start = at + "out of ".len();
            let len = lower[start..]
                .find(|c: char| !c.is_ascii_lowercase())
                .unwrap_or(lower.len() - start);
            let word = &lower[start..start + len];
            ((6..=8).contains(&len) && word != "memory" && edits_from_memory(word) <= 2)
                .then_some((start, len))
        })
        .collect();
    for (start, len) in typos {
        let mended = format!("memory{}", " ".repeat(len - "memory".len()));
        lower.replace_range(start..start + len, &mended);
    }
    lower
}

/// The edit distance (Levenshtein) of a lower-case ASCII word from `memory`.
fn edits_from_memory(word: &str) -> usize {
    let target = b"memory";
    let mut previous: Vec<usize> = (0..=target.len()).collect();
    for (i, &letter) in word.as_bytes().iter().enumerate() {
        let mut current = vec![i + 1];
        for (j, &other) in target.iter().enumerate() {
            let substitute = previous[j] + usize::from(letter != other);
            current.push(substitute.min(previous[j + 1] + 1).min(current[j] + 1));
        }
        previous = current;
    }
    previous[target.len()]
}

/// Whether the sentence around `at` asks if there was an OOM (`Is this an OOM? No, …`,
/// `could it be out of memory?`) rather than reports one: it opens with an auxiliary verb and
/// the mention ends in a question mark.
fn asks_whether(lower: &str, at: usize) -> bool {
    let sentence_start = lower[..at]
        .rfind(['.', '!', '?', ':', ';'])
        .map_or(0, |end| end + 1);
    let first = lower[sentence_start..]
        .split_whitespace()
        .next()
        .unwrap_or("")
        .trim_matches(|c: char| !c.is_alphanumeric());
    const AUXILIARY: [&str; 10] = [
        "is", "was", "could", "can", "are", "were", "might", "may", "would", "should",
    ];
    let question = lower[at..]
        .split(['.', '!', ';'])
        .next()
        .is_some_and(|rest| rest.contains('?'));
    AUXILIARY.contains(&first) && question
}

/// A device's allocator named out of memory in a title or sentence, the way PyTorch words it
/// but without its message: `CUDA out of memory`, `[Bug] CUDA: out of memory on dual gpu`,
/// `` `XPU out of memory` error with -tp=4 ``, `HIP out of memory`. The position of the device
/// word (for `cuda`, as before) or of the line's first word.
///
/// `OOM` written in lower case after its device (`cuda oom when training`, `GPU oom`) is the
/// same (upper case is [`oom_word`]'s).
fn device_mention(text: &str) -> Option<usize> {
    let lower = memory_typos_mended(text.to_ascii_lowercase());
    // XLA's status named with the accelerator's memory (`We get HBM0 RESOURCE_EXHAUSTED error
    // when loading 8b models`): the TPU's (or GPU's) HBM ran out; `RESOURCE_EXHAUSTED` alone is
    // also gRPC's for a quota.
    if let Some(found) =
        regex!(r"(?:^|[^a-z0-9_])hbm\d*\s+resource_exhausted(?:$|[^a-z0-9_])").find(&lower)
    {
        if !asks_whether(&lower, found.start()) {
            return Some(text.len() - text.trim_start().len());
        }
    }
    if let Some(found) =
        regex!(r"(?:^|[^A-Za-z0-9_])(?i:cuda|gpu|vram|xpu|hip)\s?[:\-]?\s?oom(?:$|[^A-Za-z0-9_])")
            .find(text)
    {
        let recent = last_words(&lower[..found.start()], 3);
        let denied = recent.iter().any(|word| {
            MENTION_DENY.contains(word) || ADVICE.contains(word) || LESS.contains(word)
        });
        if !denied && !asks_whether(&lower, found.start()) {
            return Some(text.len() - text.trim_start().len());
        }
    }
    // (Also glued by underscores, as an issue title may write it: `CUDA_out_of memory`.)
    let found = regex!(r"(?:^|[^a-z0-9_])(cuda|xpu|hip)(?:\s?[:\-]?\s?|_)out[ _-]of[ _-]memory")
        .captures(&lower)?;
    let device = found.get(1)?;
    if asks_whether(&lower, device.start()) {
        return None;
    }
    if device.as_str() == "cuda"
        && (lower[device.end()..].starts_with(" out of memory")
            || lower[device.end()..].starts_with(" out-of-memory"))
    {
        return Some(device.start());
    }
    // Advice or a negation just before (`to avoid XPU out of memory`) is not a failure.
    let recent: Vec<&str> = lower[..device.start()]
        .split_whitespace()
        .rev()
        .take(3)
        .collect();
    let denied = recent
        .iter()
        .any(|word| MENTION_DENY.contains(&word.trim_matches(|c: char| !c.is_alphanumeric())));
    (!denied).then_some(text.len() - text.trim_start().len())
}

/// CUDA's or HIP's allocation named failing in a title or sentence (`CUDA malloc fails on newly
/// supported models in 0.1.32`, `Cuda malloc error`, `cudaMalloc failure when loading`,
/// `hipMalloc fails even though there is enough memory`), or jetson-utils' mapped buffer
/// (`jetson.utils -- cudaAllocMapped() failed to allocate memory`, `jetson-utils/cuda/
/// cudaMappedMemory.h`: the Jetson's shared memory, the GPU's there): the
/// device's memory ran out, its message not pasted. Not advice, a negation or a question. The
/// position of the line's first word.
fn malloc_mention(text: &str) -> Option<usize> {
    let lower = text.to_ascii_lowercase();
    let found = regex!(
        r"(?:^|[^a-z0-9_])(?:(?:cuda|hip) ?malloc(?:async)?|cudaallocmapped)(?:\(\))? (?:fail(?:s|ed|ure|ing)?|errors?)\b"
    )
    .find(&lower)?;
    if asks_whether(&lower, found.start()) {
        return None;
    }
    let recent = last_words(&lower[..found.start()], 3);
    let denied = recent
        .iter()
        .any(|word| MENTION_DENY.contains(word) || ADVICE.contains(word));
    (!denied).then_some(text.len() - text.trim_start().len())
}

/// PyTorch's OOM class named in a title or sentence, its message not pasted
/// (`torch.cuda.OutOfMemoryError when generating long videos`, `torch.OutOfMemoryError during
/// eval on 2 GPUs`): a word of the sentence follows the class, not the message's `:` (read by
/// `pytorch::start`) nor nothing (an exception's class alone, `class_only_start`). Not advice,
/// a negation or a question. The position of the line's first word. CuPy's class too
/// (`cupy.cuda.memory.OutOfMemoryError in forward`): `cupy/cuda/memory.pyx` raises it only
/// when its device memory pool cannot allocate (`MemoryPointer`/`_malloc`, CuPy 5–13).
fn class_mention(text: &str) -> Option<usize> {
    // Or the class quoted as code and closed (a title's `vllm not starting due to
    // \`torch.OutOfMemoryError\``): the quote ends the name, so no word needs to follow.
    let found =
        regex!(r"(?:^|[^A-Za-z0-9_.])(?:torch\.(?:cuda\.|xpu\.)?|cupy\.cuda\.memory\.|(?:CUDA|XPU|HIP|MPS|GPU) )OutOfMemoryError\s+[a-z]")
            .find(text)
            .or_else(|| {
                regex!(r"(?:^|[^A-Za-z0-9_.])[`'\x22]torch\.(?:cuda\.|xpu\.)?OutOfMemoryError[`'\x22]")
                    .find(text)
            })
            // Or a heading naming the class, its colon before the reporter's words (`#
            // torch.cuda.OutOfMemoryError: for multi-gpu training`).
            .or_else(|| {
                regex!(r"^\s*#+\s+(?:.*?[^A-Za-z0-9_.])?torch\.(?:cuda\.|xpu\.)?OutOfMemoryError:\s+[a-z]")
                    .find(text)
            })
            // Or the class with its message paraphrased in lower case (`with error:
            // \`torch.cuda.OutOfMemoryError: tried to allocate... 7.75 total capacity\``).
            .or_else(|| {
                regex!(r"(?:^|[^A-Za-z0-9_.])torch\.(?:cuda\.|xpu\.)?OutOfMemoryError:\s+tried to allocate")
                    .find(text)
            })
            // Or TensorFlow's class for an allocation it could not make, named with what was
            // running (`ResourceExhaustedError when running the file evaluate_sample.py`).
            .or_else(|| {
                regex!(r"(?:^|[^A-Za-z0-9_.])(?:tf\.errors\.|errors_impl\.)?ResourceExhaustedError\s+(?:when|while|during|in|on|at|after|with)\s")
                    .find(text)
            })
            // Or a heading ending with the class, another error named before it (`# Returned
            // exception: 'X' object has no attribute 'socketio' AND torch.cuda.OutOfMemoryError`).
            .or_else(|| {
                regex!(r"^\s*#+\s+.*[^A-Za-z0-9_.]torch\.(?:cuda\.|xpu\.)?OutOfMemoryError\s*$")
                    .find(text)
            })
            // Or the class ending the line with its colon, the message left off (a title's
            // `# Using 4 V100-16, and set batchsize=1, torch.cuda.OutOfMemoryError:`).
            .or_else(|| {
                regex!(r"(?:^|[^A-Za-z0-9_.])torch\.(?:cuda\.|xpu\.)?OutOfMemoryError:\s*$")
                    .find(text)
            })?;
    let lower = text.to_ascii_lowercase();
    if asks_whether(&lower, found.start()) {
        return None;
    }
    let recent = last_words(&lower[..found.start()], 3);
    let denied = recent.iter().any(|word| {
        MENTION_DENY.contains(word)
            || ADVICE.contains(word)
            || matches!(*word, "except" | "catch" | "catching")
    });
    (!denied).then_some(text.len() - text.trim_start().len())
}

/// Words just before an `OOM` that make it a guess, not a report (`probably an OOM`).
const GUESS: [&str; 4] = ["probably", "maybe", "perhaps", "likely"];

/// Words just before a mention that make it advice, a negation or a question of what to do.
const MENTION_DENY: [&str; 11] = [
    "if", "no", "not", "avoid", "prevent", "without", "never", "address", "handle", "whether",
    "unless",
];

/// GPU memory running short in Chinese prose: 显存不足 / 显存不够 (not enough GPU memory),
/// 显存溢出 (overflowed), 爆显存 / 显存爆了 (blew the GPU memory). 显存 is the GPU's memory
/// (the host's is 内存); 炸显存 the same as 爆显存. Japanese: VRAM不足, GPUメモリ不足. Not after a negation (没有, 不会) or advice (避免, 防止). The position of
/// the line's first word: the whole sentence is the mention.
fn cjk_mention(text: &str) -> Option<usize> {
    // Japanese writes the GPU's memory VRAM or GPUメモリ (メモリ不足 alone is any memory).
    // 炸显存 / 显存炸了 (blew up the GPU memory): the same slang as 爆显存.
    // (`显存存不够用`: 存 typed twice, session 49.)
    const SHORT: [&str; 11] = [
        "显存不足",
        "显存不够",
        "显存存不够",
        "显存溢出",
        "爆显存",
        "显存爆",
        "炸显存",
        "显存炸",
        "VRAM不足",
        "GPUメモリ不足",
        "GPUメモリが不足",
    ];
    // The memory named by its device: 显卡内存 (the graphics card's memory), `GPU内存`,
    // `CUDA内存` (内存 alone is the host's).
    // Japanese `GPUのメモリが不足`, Korean `GPU 메모리 부족` / `VRAM 부족` the same way.
    let qualified = || {
        regex!(r"(?i)(?:显卡|gpu|cuda|vram)\s?(?:的)?内存(?:不足|不够|溢出|爆)|(?:gpu|vram|ビデオ)の?メモリ(?:が)?不足|(?:gpu|cuda|그래픽\s?카드)\s?메모리(?:가)?\s?부족|vram\s?(?:메모리(?:가)?\s?)?부족")
            .find(text)
            .map(|found| found.start())
    };
    // 内存 (the host's memory in strict use) said of a job on a named card: `我在用T4单卡跑7B
    // int4的QLoRA微调，跑不了，显示内存溢出` (many reporters write 内存 for the GPU's memory).
    let on_a_card = || {
        let at = regex!(r"内存(?:溢出|不足|不够)").find(text)?.start();
        let lower = text.to_ascii_lowercase();
        let card = has_gpu_word(&lower)
            || ["显卡", "单卡", "多卡", "双卡"]
                .iter()
                .any(|w| text.contains(w));
        // (Nor a line that names the GPU's memory 显存 apart: `是我的内存不够 … GTX 1080Ti
        // 11G显存，16G内存`, the writer keeps 内存 for the host's.)
        let host = regex!(r"(?i)(?:^|[^a-z])(?:cpu|ram)(?:$|[^a-z])|系统内存|主机内存")
            .is_match(text)
            || text.contains("显存");
        (card && !host).then_some(at)
    };
    // An adverb between (`3090的24GB显存会溢出呢`, would overflow; `显存直接爆了`, blew at once;
    // `显存就不够了`), session 48; a negation before the adverb (`显存不会溢出`) is no match.
    let adverb = || {
        regex!(r"显存(?:会|就|直接|又|还是|还|也|都|已经|全部|瞬间)(?:溢出|爆|不足|不够)")
            .find(text)
            .map(|found| found.start())
    };
    let at = SHORT
        .iter()
        .filter_map(|words| text.find(words))
        .min()
        .or_else(adverb)
        .or_else(qualified)
        .or_else(|| japanese_not_enough(text))
        .or_else(on_a_card)?;
    (!cjk_denied(&text[..at])).then_some(text.len() - text.trim_start().len())
}

/// Japanese `足りない` / `足りず` / `足りません` (is not enough) said of the GPU's memory:
/// `GPUメモリが足りずに学習できなかった` (could not train, the GPU memory being short),
/// `VRAMが足りない`. Not `足ります` (is enough), not メモリ alone (any memory), not
/// `GPUが足りない` (too few GPUs). The position of the memory's name.
fn japanese_not_enough(text: &str) -> Option<usize> {
    regex!(r"(?i)(?:(?:gpu|ビデオ)\s?の?\s?メモリ|vram)\s?(?:が|は)?足り(?:ず|ない|なく|ません)")
        .find(text)
        .map(|found| found.start())
}

/// Whether the Chinese words just before a mention (its last six characters) deny or avoid it
/// (`没有显存不足`, `避免OOM`, `防止`, `不会`, `不再`, `解决`): not a failure of the job.
fn cjk_denied(before: &str) -> bool {
    let head: Vec<char> = before.chars().collect();
    let near: String = head[head.len().saturating_sub(6)..].iter().collect();
    const DENY: [&str; 6] = ["没有", "不会", "避免", "防止", "不再", "解决"];
    DENY.iter().any(|word| near.contains(word))
}

/// The word `OOM` in a title or a sentence about a GPU job (`EXAONE-4.0-32B with VSWA causes
/// OOM on A100-40G x 4`, `CUDA OOM with Kimi-K2.5 NVFP4`, `OOM error during VAE decode`), not
/// the host's OOM killer (`OOMKilled`, `oom-kill`, `OOM killer`). The position of the line's
/// first word: the whole sentence is the mention.
fn oom_word(text: &str) -> Option<usize> {
    // A CJK sentence glues its words to `OOM` (`所用显存…导致OOM`, `显存不够会OOM吗`): only an
    // ASCII letter or digit makes it part of another word, as in [`weak_mention`]; the Chinese
    // words of denial before it then keep it from being a report.
    let at = oom_positions(text).into_iter().find(|&at| {
        let before = text[..at].chars().next_back();
        let after = text[at + 3..].chars().next();
        before.is_none_or(|c| !c.is_ascii_alphanumeric())
            && (after.is_none_or(|c| !(c.is_ascii_alphanumeric() || c == '-' || c == '_'))
                || oom_verb(&text[at + 3..]).is_some())
    })?;
    if cjk_denied(&text[..at]) {
        return None;
    }
    // `it OOMs at step 100`, `the run OOMed`, `OOMing on the second batch`, `OOM'd`: the job
    // hit it, a failure whatever the words around.
    let verb = oom_verb(&text[at + 3..]);
    let rest = &text[at + 3 + verb.unwrap_or(0)..];
    if asks_whether(&text.to_ascii_lowercase(), at) {
        return None;
    }
    // A guess at what happened (`There's probably an OOM`, `maybe OOM?`): not a report.
    let guess = last_words(&text[..at].to_ascii_lowercase(), 3)
        .iter()
        .any(|word| GUESS.contains(word));
    if guess {
        return None;
    }
    // A negation just before (`successfully checkpoints without OOMing`, `it never OOMs`,
    // `does not OOM`): no failure.
    let negated = last_words(&text[..at].to_ascii_lowercase(), 2)
        .iter()
        .any(|word| {
            matches!(
                *word,
                "without" | "never" | "not" | "no" | "avoid" | "prevent" | "doesn't" | "didn't"
            )
        });
    if negated {
        return None;
    }
    // The host's words count in the sentence that says `OOM` (`The script works on a large-RAM
    // CPU. However, on GPU (V100 16GB) I got an OOM error`: the CPU ran it fine).
    // (`GPU RAM` is the card's: `# OOM error where ~50% of the GPU RAM cannot be utilised`.)
    let hosted = without_offload(sentence_around(text, at));
    let hosted = regex!(r"(?i)\b(?:gpu|video|graphics card)\s+ram\b").replace_all(&hosted, "GPU");
    // `dmesg` is the kernel's log, where the host's OOM killer reports (`use dmesg -T to
    // verify whether OOM occurred`).
    const HOST: [&str; 7] = [
        "killer", "Killed", "killed", "CPU", "host", "dmesg", "DMESG",
    ];
    // `RAM` as a word (not the end of `VRAM`).
    let ram = regex!(r"(?:^|[^A-Za-z0-9_])RAM(?:$|[^A-Za-z0-9_])").is_match(&hosted);
    // Chinese names the host's memory 内存 and the GPU's 显存: `发现出现了内存OOM` (not
    // `显卡内存OOM`, `GPU内存OOM`), or `cpu内存` in the sentence.
    let before = text[..at].trim_end();
    let cjk_host = (before.ends_with("内存")
        && !regex!(r"(?i)(?:显卡|gpu|cuda)\s?的?内存$").is_match(before))
        || regex!(r"(?i)(?:cpu|系统|主机)\s?内存").is_match(&hosted);
    if ram
        || cjk_host
        || HOST.iter().any(|word| hosted.contains(word))
        || rest.trim_start().starts_with("kill")
    {
        return None;
    }
    const GPU: [&str; 14] = [
        "GPU", "CUDA", "cuda", "VRAM", "vram", "A100", "H100", "H200", "RTX", "error", "jit",
        "XLA", "TPU", "显存",
    ];
    // An issue's title kept as a markdown heading (`# OOM when jax.jit is used …`): the
    // reporter names the failure of the job the issue is about.
    let heading = text.trim_start().starts_with("# ");
    (heading
        || verb.is_some()
        || GPU.iter().any(|word| text.contains(word))
        || has_gpu_word(&text.to_ascii_lowercase())
        || oom_as_failure(&text[..at], rest))
    .then_some(text.len() - text.trim_start().len())
}

/// Where the word `OOM` stands in the text: in capitals, or in lower case right after a verb
/// that hits it (`but still getting oom`, `I got oom on a 3090`), as reporters type it; lower
/// case alone is the end of other words (`room`, `zoom`, `bloom`) or the host's killer
/// (`oom-kill`, `oom_score_adj`), which the callers' word checks leave out.
fn oom_positions(text: &str) -> Vec<usize> {
    // `OoM` as some reporters type it (`I end up with a CUDA OoM:`).
    let mut positions: Vec<usize> = text
        .match_indices("OOM")
        .chain(text.match_indices("OoM"))
        .map(|(at, _)| at)
        .collect();
    // Glued to the CJK words before it (`报oom`, `出现oom`, `导致oom`, `报错oom`, `微调oom`): a
    // report, as the capitals are (CJK text puts no space before a Latin word; the words of
    // denial or advice before it, `避免oom`, are [`cjk_denied`]'s).
    for (at, _) in text.match_indices("oom") {
        let before = text[..at].chars().next_back();
        let after = text[at + 3..].chars().next();
        if before.is_some_and(is_cjk) && after.is_none_or(|c| !c.is_ascii_alphanumeric()) {
            positions.push(at);
        }
    }
    for (at, _) in text.match_indices("oom") {
        // A word of its own: after a space, or markdown's emphasis or a quote (`**oom occurs**`).
        if !text[..at]
            .chars()
            .next_back()
            .is_some_and(|c| matches!(c, ' ' | '*' | '_' | '`' | '"' | '\''))
        {
            continue;
        }
        let after = text[at + 3..].chars().next();
        let word_ends = after.is_none_or(|c| !(c.is_alphanumeric() || c == '-' || c == '_'));
        let before = text[..at].to_lowercase();
        // `still` stands for the verb a reporter leaves out (`but still oom`, `it still oom
        // with batch 1`).
        let verb = last_words(&before, 1)
            .first()
            .is_some_and(|word| OOM_VERBS.contains(word) || *word == "still");
        // Or the subject of a verb of happening (`when inference, batch size = 4, oom occurs`).
        let next = text[at + 3..]
            .split_whitespace()
            .next()
            .map(|word| word.trim_end_matches(|c: char| !c.is_alphanumeric()));
        let happens = next.is_some_and(|word| OOM_HAPPENS.contains(&word));
        // Or a title's subject and where it ran out (`qwen2.5-vl-72b oom in 4 A100 in 0.8.3`,
        // `llama-70b oom with tp=4`, `oom when training`).
        let placed = next.is_some_and(|word| OOM_PLACES.contains(&word));
        // Or the last word of a title or a sentence, what it ends on (`serve
        // Llama-3.2-11B-Vision-Instruct with 2 A10 oom`).
        // An adverb of time may close it (`generate done, but still oom finally`, `oom again`).
        let last = {
            let tail = text[at + 3..].trim_end().trim_end_matches(['.', '!']);
            let tail = tail.trim_start();
            tail.is_empty() || OOM_CLOSING.contains(&tail.to_ascii_lowercase().as_str())
        };
        if word_ends && (verb || happens || placed || last) {
            positions.push(at);
        }
    }
    positions.sort_unstable();
    positions
}

/// The sentence of `text` around byte `at`: from after the last `. `, `! ` or `? ` before it to
/// the next one after it.
fn sentence_around(text: &str, at: usize) -> &str {
    let ends = |c: char| matches!(c, '.' | '!' | '?');
    let begin = text[..at]
        .char_indices()
        .rev()
        .find(|&(i, c)| ends(c) && text[i + 1..].starts_with(' '))
        .map_or(0, |(i, _)| i + 1);
    let end = text[at..]
        .char_indices()
        .find(|&(i, c)| ends(c) && (text[at + i + 1..].starts_with(' ')))
        .map_or(text.len(), |(i, _)| at + i + 1);
    &text[begin..end]
}

/// Verbs that hit an `OOM` ([`oom_as_failure`]; a lower-case `oom` counts after one only).
/// (`encountered`: `using a 4-card GPU with 96GB video memory and encountered oom. I only
/// loaded 20 weight files before encountering oom`, session 48; `having`: `Also having oom
/// problems, even when using --t5_cpu`, session 49.)
const OOM_VERBS: [&str; 28] = [
    "running",
    "run",
    "runs",
    "ran",
    "into",
    "get",
    "gets",
    "got",
    "getting",
    "hit",
    "hits",
    "hitting",
    "throws",
    "threw",
    "throw",
    "causes",
    "caused",
    "causing",
    "goes",
    "went",
    "encounter",
    "encounters",
    "encountered",
    "encountering",
    "have",
    "has",
    "had",
    "having",
];

/// Adverbs of time that may end a title or sentence after its last word `oom`
/// ([`oom_positions`]).
const OOM_CLOSING: [&str; 6] = [
    "finally",
    "again",
    "anyway",
    "eventually",
    "immediately",
    "too",
];

/// Prepositions that may follow a lower-case `oom` ([`oom_positions`]): where or when the
/// subject before it ran out.
const OOM_PLACES: [&str; 8] = ["in", "on", "with", "when", "during", "while", "after", "at"];

/// Verbs of happening whose subject is a lower-case `oom` ([`oom_positions`]).
const OOM_HAPPENS: [&str; 8] = [
    "occurs", "occurred", "occured", "occur", "happens", "happened", "happen", "appears",
];

/// The length of a verb ending glued to `OOM` (`s`, `ed`, `ing`, `'d`) at the start of `rest`,
/// when a word ends there. Not a counter's label (`CUDA OOMs: 0` of `torch.cuda.
/// memory_summary()`).
fn oom_verb(rest: &str) -> Option<usize> {
    // (Hyphenated or with an apostrophe as some type it: `OOM-ing with Gemma 3N`, `OOM'ing`,
    // `OOM-ed`.)
    [
        "s", "ed", "ing", "'d", "’d", "-ing", "'ing", "’ing", "-ed", "'ed",
    ]
    .iter()
    .find_map(|ending| {
        let after = rest.strip_prefix(ending)?;
        let word_ends = after
            .chars()
            .next()
            .is_none_or(|c| !(c.is_alphanumeric() || c == '-' || c == '_'));
        // A counter's label is followed by its count (`CUDA OOMs: 0`, `num_ooms=1`); a verb
        // may end its sentence on a colon before the pasted error (`it OOMs:`).
        let value = after.trim_start();
        let label = value.starts_with('=')
            || value
                .strip_prefix(':')
                .is_some_and(|count| count.trim_start().starts_with(|c: char| c.is_ascii_digit()));
        (word_ends && !label).then_some(ending.len())
    })
}

/// `OOM` used as the failure of the reporter's job, without a device word: a verb that hits
/// it (`I am running OOM on g5.8xlarge`, `running into OOM issues`, `it still throws an OOM
/// exception`, `OOMs at generation time` is read by the caller's boundary) or a noun of
/// failure after it (`OOM exception`, `OOM issues`, `OOM problem`, `OOM crash`). Not advice or
/// a negation (`to avoid OOM issues`, `no OOM problem`).
fn oom_as_failure(before: &str, after: &str) -> bool {
    let lower = before.to_lowercase();
    let recent = last_words(&lower, 3);
    if recent
        .iter()
        .any(|word| MENTION_DENY.contains(word) || LESS.contains(word))
    {
        return false;
    }
    // The verb right before, or before an article (`throws an OOM exception`).
    let verb = match recent.as_slice() {
        [first, ..] if OOM_VERBS.contains(first) => true,
        ["a" | "an", second, ..] => OOM_VERBS.contains(second),
        _ => false,
    };
    let next = after
        .trim_start_matches(|c: char| !c.is_alphanumeric())
        .split(|c: char| !c.is_alphanumeric())
        .next()
        .unwrap_or("")
        .to_lowercase();
    const NOUNS: [&str; 7] = [
        "exception",
        "exceptions",
        "issue",
        "issues",
        "problem",
        "problems",
        "crash",
    ];
    // `OOM` as the subject of a verb of happening (`oom occurs`, `an OOM happened`).
    verb || NOUNS.contains(&next.as_str()) || OOM_HAPPENS.contains(&next.as_str())
}

/// The line without the offloading it names (`CPU offload`, `offload to CPU`, `cpu_offload`):
/// offloading to the host is a way to save GPU memory, not the host's memory running out. A
/// machine named as a pair (`OOM on "slow" GPU/CPU setup`) keeps only its GPU: the pair is the
/// setup, not the host's memory.
/// `text` lower-cased character by character where that keeps each character's length in
/// bytes (`İ` lower-cases to two characters, `ẞ` to a shorter one: those stay), so a byte
/// position found in one is a position in the other.
fn lowercase_in_place(text: &str) -> String {
    text.chars()
        .map(|c| {
            let mut lower = c.to_lowercase();
            match (lower.next(), lower.next()) {
                (Some(single), None) if single.len_utf8() == c.len_utf8() => single,
                _ => c,
            }
        })
        .collect()
}

fn without_offload(text: &str) -> String {
    let text = regex!(r"(?i)cpu[ _-]?offload(?:ing)?|offload(?:ing|ed)?(?: \w+)? to (?:the )?cpu")
        .replace_all(text, "");
    regex!(r"(?i)\bgpu ?/ ?cpu\b|\bcpu ?/ ?gpu\b")
        .replace_all(&text, "GPU")
        .into_owned()
}

/// An out-of-memory failure named in the reporter's own words, its message not pasted: `I get
/// an out of memory error when …`, `NV 3060 6GB Error out of memory.`, `API OutOfMemory Error`,
/// Chinese `会出现out of memory`. The position of the line's first word: the whole sentence is
/// the mention. Not advice or a negation (`If you see out-of-memory errors …`, `there is no
/// out of memory error`), and not the host's memory (`RAM`, `CPU`, `swap`, `内存`).
fn prose_mention(text: &str) -> Option<usize> {
    // `Out-of-Memory (OOM) Error with CPU Offload`: the abbreviation in brackets and the
    // offloading (a way to save GPU memory) say nothing of whose memory ran out.
    // Quotes around the error's words (`Error "out of memory" while there is enough memory`).
    let lower = without_offload(text)
        .to_lowercase()
        .replace(" (oom)", "")
        .replace(['"', '`', '“', '”'], "");
    // A device's memory named failing (`it starts but stops for a CUDA memory error`): the
    // reporter's name for the allocator's error, whose message is not pasted.
    const PHRASES: [&str; 8] = [
        "out of memory error",
        "out-of-memory error",
        "outofmemory error",
        "error out of memory",
        "oom error",
        "cuda memory error",
        "gpu memory error",
        // TensorFlow's OOM status (`ResourceExhaustedError`) in the reporter's words.
        "resource exhausted error",
    ];
    let at = PHRASES
        .iter()
        .filter_map(|phrase| lower.find(phrase))
        .min()
        .or_else(|| {
            // Glued to a CJK word, as Chinese and Japanese sentences write English terms.
            lower
                .match_indices("out of memory")
                .map(|(at, _)| at)
                .find(|&at| {
                    let before = lower[..at].chars().next_back();
                    let after = lower[at + "out of memory".len()..].chars().next();
                    before.is_some_and(is_cjk) || after.is_some_and(is_cjk)
                })
        })?;
    const HOST: [&str; 12] = [
        "ram",
        "cpu",
        "host",
        "system memory",
        "swap",
        "java",
        "heap",
        "killed",
        "内存",
        "disk",
        "shared memory",
        "shm",
    ];
    let words: Vec<&str> = lower
        .split(|c: char| !(c.is_alphanumeric() || c == '_'))
        .collect();
    let host = HOST.iter().any(|word| {
        if word.contains(' ') || !word.is_ascii() {
            lower.contains(word)
        } else {
            words.contains(word)
        }
    });
    // Advice, a negation or a question of what to do about one, in the words just before it.
    let before = &lower[..at];
    let recent: Vec<&str> = before.split_whitespace().rev().take(4).collect();
    let denied = recent
        .iter()
        .any(|word| MENTION_DENY.contains(&word.trim_matches(|c: char| !c.is_alphanumeric())));
    (!host && !denied && !asks_whether(&lower, at)).then_some(text.len() - text.trim_start().len())
}

/// The GPU's memory named short in a European language's sentence, the memory named by its
/// device (as [`cjk_mention`] asks): Russian `не хватает видеопамяти` / `недостаточно памяти
/// GPU` (video memory, the GPU's memory), Spanish `me quedo sin memoria de GPU`, Portuguese
/// `memória insuficiente na GPU`, Italian `memoria GPU insufficiente`, French `mémoire GPU
/// insuffisante` / `manque de VRAM`, German `nicht genügend VRAM` / `Grafikspeicher voll`.
/// The memory alone (`памяти`, `memoria`, `Speicher`) is the host's as often, and is not this.
/// The position of the line's first word: the whole sentence is the mention.
fn european_mention(text: &str) -> Option<usize> {
    // The GPU's memory, by language.
    const RU: &str = r"(?:видеопамят\w*|памяти\s+(?:на\s+)?(?:gpu|видеокарт\w*|cuda|гпу))";
    const ROMANCE: &str = r"(?:memoria|memória|mémoire)\s+(?:de\s+(?:la\s+)?|da\s+|na\s+|della\s+|en\s+la\s+)?(?:gpu|vram|v[íi]deo|vid[ée]o)";
    const DE: &str = r"(?:vram|gpu-speicher|grafikspeicher|videospeicher|grafikkartenspeicher)";
    static SHORT: std::sync::LazyLock<regex::Regex> = std::sync::LazyLock::new(|| {
        let alternatives = [
            format!(r"(?:не\s+хватает|недостаточно|нехватк\w*|закончил\w*|кончил\w*|переполн\w*)\s+(?:\w+\s+)?{RU}"),
            format!(r"{RU}\s+(?:не\s+хватает|недостаточно|закончил\w*|кончил\w*|переполнен\w*)"),
            format!(r"(?:sin|sem|senza)\s+{ROMANCE}"),
            format!(r"{ROMANCE}\s+(?:insuficiente|insufficiente|insuffisante|esaurita|agotada|esgotada|pleine|llena|cheia)"),
            r"(?:memoria|memória|mémoire)\s+insu(?:ficiente|fficiente|ffisante)\s+(?:en\s+la|na|da|de\s+la|della|sur\s+la|du|de)\s+(?:gpu|vram)".to_string(),
            r"(?:^|[^\w])(?:vram|gpu)\s+insu(?:ficiente|fficiente|ffisante)".to_string(),
            r"(?:manque|plus)\s+de\s+(?:vram|m[ée]moire\s+(?:gpu|vid[ée]o))".to_string(),
            format!(r"(?:nicht\s+genügend|nicht\s+genug|zu\s+wenig)\s+{DE}"),
            format!(r"{DE}\s+(?:ist\s+)?(?:voll|reicht\s+nicht|zu\s+klein|erschöpft)"),
        ];
        super::compile(&alternatives.join("|"))
    });
    let lower = text.to_lowercase();
    SHORT
        .is_match(&lower)
        .then_some(text.len() - text.trim_start().len())
}

/// A CJK ideograph or kana (sentences that glue English terms to their words).
fn is_cjk(c: char) -> bool {
    matches!(c, '\u{3040}'..='\u{30ff}' | '\u{3400}'..='\u{4dbf}' | '\u{4e00}'..='\u{9fff}')
}

/// An application's own words for an OOM it caught ([`mention_start`]).
const APP_MENTIONS: [&str; 14] = [
    // Ollama's runner (`llm/server.go` `(*ollamaServer).Load`, 0.11+): the layout of the
    // model's layers on the GPUs could not be allocated even after backing off its estimate
    // of free memory: `errors.New("memory layout cannot be allocated")`, or
    // `"memory layout cannot be allocated with num_gpu = %v"` when the layer count was set.
    "memory layout cannot be allocated",
    // The same words capitalised where a reporter's title or sentence quotes them.
    "Memory layout cannot be allocated",
    // LM Studio's guardrail refusing to load a model that its estimate says does not fit the
    // GPU's memory (and the host's): `Not enough resources to load the model with the current
    // settings` (the app's own words, quoted in its bug tracker's reports; the app is closed).
    "Not enough resources to load the model",
    // InvokeAI's model cache on `torch.cuda.OutOfMemoryError` while moving a model to the GPU
    // (`invokeai/backend/model_manager/load/model_cache/model_cache.py` `lock`, 5.x): logs
    // "Insufficient GPU memory to load model. Aborting" and raises the error again.
    "Insufficient GPU memory to load model",
    "Ran out of memory when regular VAE decoding",
    // Xinference's model actor on a framework's GPU OOM (`xinference/core/model.py`
    // `_async_wrapper` / `_call_wrapper`, 0.7+: `except OutOfMemoryError: logger.exception(
    // "Model actor is out of memory.")`, then the actor exits).
    "Model actor is out of memory",
    // Detectron2's retry after a CUDA OOM (`detectron2/utils/memory.py` `retry_if_cuda_oom`:
    // the call failed on the GPU twice, the second time after `torch.cuda.empty_cache()`,
    // and its inputs are copied to the CPU for a third try).
    "to CPU due to CUDA OOM",
    "Got an OOM, unloading all loaded models",
    // Forge (stable-diffusion-webui-forge) after catching one in its sampler: `Encountered
    // Out of Memory during Sampling; Unloading all Models...`.
    "Encountered Out of Memory",
    // XLA's dump under its `RESOURCE_EXHAUSTED: Out of memory while trying to allocate …`
    // (`xla/service/buffer_assignment.cc`, the peak buffers of the program that did not fit),
    // pasted without the message above it.
    "Peak buffers:",
    // Its buffers' lines (`XLA Label: fusion = …`), the tail of that dump without its head;
    // the TPU compiler's `Largest program allocations in hbm` lists write `XLA label:`.
    "XLA Label:",
    "XLA label:",
    // fairseq's trainer after a CUDA OOM in a batch (`fairseq/trainer.py` `train_step` /
    // `valid_step`: `"out of memory" in str(e)` → `ran out of memory, skipping batch`, logged
    // with a `| WARNING: ` prefix in its older `print`s), and the copies of that loop in other
    // projects (Boltz's `boltz/model/model.py`, its `predict_step`): the batch's GPU memory ran
    // out; the job goes on without it.
    "ran out of memory, skipping batch",
    // The CUDA driver's description of `CUDA_ERROR_OUT_OF_MEMORY` (`cuda.h`: "The API call
    // failed because it was unable to allocate enough memory or other resources to perform the
    // requested operation"), as wrappers that print the description write it (ManagedCuda's
    // `CudaException: ErrorOutOfMemory: The API call failed because it was unable to allocate
    // enough memory to perform the requested operation`, CUDA 10's shorter wording).
    "The API call failed because it was unable to allocate enough memory",
];

/// Whether a figureless message is a mention ([`mention_start`]).
pub(super) fn is_mention(message: &OomMessage) -> bool {
    if message.kind == OomKind::NamedWithoutMessage {
        return true;
    }
    message.kind == OomKind::OtherGpuOom
        && message.figures == OomFigures::default()
        && (device_mention(&message.text) == Some(0)
            || oom_word(&message.text) == Some(0)
            || prose_mention(&message.text) == Some(0)
            || cjk_mention(&message.text) == Some(0)
            || european_mention(&message.text) == Some(0)
            || malloc_mention(&message.text) == Some(0)
            || class_mention(&message.text) == Some(0)
            || (gpu_memory_mention(&message.text) == Some(0)
                && !super::starts_a_message(&message.text))
            || (is_weak(&message.text) && !super::starts_a_message(&message.text))
            || APP_MENTIONS
                .iter()
                .any(|words| message.text.starts_with(words)))
}

/// Words just before an OOM mention that make it less than a failure of the reporter's job:
/// advice to have fewer (`reduce`, `avoiding`), a possibility (`possible OOM`).
const LESS: [&str; 8] = [
    "reduce",
    "reduces",
    "reducing",
    "avoiding",
    "fewer",
    "less",
    "possible",
    "potential",
];

/// The last `count` words of `text`, last first, without the punctuation around them.
fn last_words(text: &str, count: usize) -> Vec<&str> {
    text.split_whitespace()
        .rev()
        .take(count)
        .map(|word| word.trim_matches(|c: char| !c.is_alphanumeric()))
        .collect()
}
