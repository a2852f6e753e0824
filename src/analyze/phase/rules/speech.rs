//! The frame rules of speech: openai-whisper, faster-whisper, whisperX, stable-ts, Whisper apps,
//! diarization.
//! `rules.rs` orders the segments into one table (the first rule that matches applies).

use super::r;
use crate::analyze::phase::FrameRule;
use crate::analyze::phase::Role::{Serve, Stage};
use crate::model::explain::Phase::{Inference as I, TrainingStep as T, WeightsLoad as W};

/// A segment of the frame table (its place in the order: `rules.rs` `SEGMENTS`).
pub(super) const QUALIFIED_WHISPER_WRAPPERS: &[FrameRule] = &[
    // --- Whisper wrappers: jianfch/stable-ts `stable_whisper/` `transcribe_stable` and
    // `load_faster_whisper`; linto-ai/whisper-timestamped `transcribe_timestamped`. ---
    r("transcribe_stable", "", I, Serve, "whisper"),
    r("transcribe_timestamped", "", I, Serve, "whisper"),
    r(
        "load_faster_whisper",
        "stable_whisper/",
        W,
        Stage,
        "whisper",
    ),
    // CTranslate2's `Translator.translate_batch` (a native method, so any file) and
    // OpenNMT-py's `Translator.translate_batch`: translating a batch.
    r("translate_batch", "", I, Serve, "ctranslate2"),
];

/// A segment of the frame table (its place in the order: `rules.rs` `SEGMENTS`).
pub(super) const QUALIFIED_WHISPER_APPS: &[FrameRule] = &[
    // --- Whisper apps and diarization: jhj0517/Whisper-WebUI `modules/whisper/*_inference.py`
    // `transcribe` and `update_model` (loads the model); pyannote.audio 3.x
    // `pipelines/speaker_diarization.py` `SpeakerDiarization.apply`, `core/inference.py`
    // `Inference.infer`. ---
    r("transcribe", "modules/whisper/", I, Serve, "whisper"),
    r("update_model", "modules/whisper/", W, Stage, "whisper"),
    r("apply", "pyannote/audio/pipelines/", I, Serve, "pyannote"),
    r(
        "infer",
        "pyannote/audio/core/inference.py",
        I,
        Serve,
        "pyannote",
    ),
];

/// A segment of the frame table (its place in the order: `rules.rs` `SEGMENTS`).
pub(super) const WHISPER: &[FrameRule] = &[
    // --- Speech: openai-whisper (20231117 `whisper/transcribe.py` `transcribe` →
    // `decode_with_fallback` → `whisper/decoding.py` `decode` → `DecodingTask.run`) and
    // faster-whisper (1.x `faster_whisper/transcribe.py` `WhisperModel.transcribe` →
    // `generate_segments` → `encode` / `generate_with_fallback`): transcribing audio. Loading is
    // `whisper.load_model` / `WhisperModel.__init__`, matched by the load rules above. ---
    r("transcribe", "whisper/transcribe.py", I, Serve, "whisper"),
    r("decode_with_fallback", "whisper/", I, Serve, "whisper"),
    r("decode", "whisper/decoding.py", I, Serve, "whisper"),
    r("transcribe", "faster_whisper/", I, Serve, "faster-whisper"),
    r(
        "generate_segments",
        "faster_whisper/",
        I,
        Serve,
        "faster-whisper",
    ),
    r(
        "generate_with_fallback",
        "faster_whisper/",
        I,
        Serve,
        "faster-whisper",
    ),
    r("encode", "faster_whisper/", I, Serve, "faster-whisper"),
];

/// A segment of the frame table (its place in the order: `rules.rs` `SEGMENTS`).
pub(super) const SPEECH_APPS: &[FrameRule] = &[
    // --- Speech apps. whisperX 3.x (`whisperx/asr.py`: `load_model` builds the faster-whisper
    // pipeline, `FasterWhisperPipeline.transcribe` → `generate_segment_batched`;
    // `whisperx/alignment.py` `load_align_model` / `align`; `whisperx/diarize.py`
    // `DiarizationPipeline.__init__` loads pyannote, `__call__` diarizes). faster-whisper 1.x
    // `faster_whisper/transcribe.py` `WhisperModel.__init__` builds the CTranslate2 model on the
    // device (its weights load). faster-whisper-GUI 0.5–0.8 (`faster_whisper_GUI/transcribe.py`
    // `TranscribeWorker.run`: the worker thread that transcribes the chosen files; loading is
    // `modelLoad.py`). ---
    r(
        "__init__",
        "faster_whisper/transcribe.py",
        W,
        Stage,
        "faster-whisper",
    ),
    r("load_align_model", "whisperx/", W, Stage, "whisperx"),
    r("__init__", "whisperx/diarize.py", W, Stage, "whisperx"),
    r("transcribe", "whisperx/asr.py", I, Serve, "whisperx"),
    r(
        "generate_segment_batched",
        "whisperx/",
        I,
        Serve,
        "whisperx",
    ),
    r("align", "whisperx/alignment.py", I, Serve, "whisperx"),
    r("__call__", "whisperx/diarize.py", I, Serve, "whisperx"),
    r(
        "run",
        "faster_whisper_GUI/transcribe.py",
        I,
        Serve,
        "faster-whisper-gui",
    ),
    // ESPnet: espnet2 0.9–202x `espnet2/bin/asr_inference.py` (`inference`, `Speech2Text.
    // __call__`) and the beam searches `espnet/nets/beam_search.py`, `batch_beam_search.py`
    // decode (recipes' decoding stage); `espnet2/train/trainer.py` `train_one_epoch` is a
    // training epoch, `validate_one_epoch` its validation.
    r("", "espnet2/bin/asr_inference.py", I, Serve, "espnet"),
    r("", "espnet/nets/beam_search.py", I, Serve, "espnet"),
    r("", "espnet/nets/batch_beam_search.py", I, Serve, "espnet"),
    r("train_one_epoch", "espnet2/train/", T, Serve, "espnet"),
    r("validate_one_epoch", "espnet2/train/", I, Serve, "espnet"),
];

/// A segment of the frame table (its place in the order: `rules.rs` `SEGMENTS`).
pub(super) const FASTER_WHISPER_BATCHED: &[FrameRule] = &[
    // --- faster-whisper 1.1 batched transcription (`faster_whisper/transcribe.py`
    // `BatchedInferencePipeline.transcribe` → `_batched_segments_generator` →
    // `generate_segment_batched`; `WhisperModel.detect_language`). ---
    r(
        "_batched_segments_generator",
        "faster_whisper/",
        I,
        Serve,
        "faster-whisper",
    ),
    r(
        "generate_segment_batched",
        "faster_whisper/",
        I,
        Serve,
        "faster-whisper",
    ),
    r(
        "detect_language",
        "faster_whisper/",
        I,
        Serve,
        "faster-whisper",
    ),
];

/// A segment of the frame table (its place in the order: `rules.rs` `SEGMENTS`).
pub(super) const AUDIO_SEPARATION: &[FrameRule] = &[
    // --- A track's stems separated, and a model's attributions: Demucs 3-4 (`demucs/apply.py`
    // `apply_model`, called per track by `demucs/separate.py` `main` and by apps such as
    // Ultimate Vocal Remover's `demix_demucs`); Open-Unmix 1.x (`openunmix/predict.py`
    // `separate`: the separator applied to an audio file); Captum 0.4-0.8 (`captum/attr/_core/`
    // `IntegratedGradients.attribute`, `LayerIntegratedGradients.attribute`, `LRP.attribute`:
    // attributions of a trained model on inputs, its forwards and gradients with no update: a
    // stage, so the gradients it takes below, `torch.autograd.grad`, stay its own). ---
    r("apply_model", "demucs/apply.py", I, Serve, "demucs"),
    r("separate", "openunmix/predict.py", I, Serve, "open-unmix"),
    r("attribute", "captum/attr/", I, Stage, "captum"),
];
