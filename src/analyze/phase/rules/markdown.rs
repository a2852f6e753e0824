//! The frame rules of special methods as a GitHub issue shows them when the traceback was pasted
//! outside a code block: Markdown reads `__init__` as `init` in bold (`__text__` is strong
//! emphasis, CommonMark 0.30 §6.2), so the frame prints `File "…/transcribe.py", line 125, in
//! init`. Each rule repeats a special method's rule of the other segments, for the same file and
//! stage, under the name Markdown leaves; none of these files defines a method of that name.
//! `rules.rs` orders the segments into one table (the first rule that matches applies).

use super::r;
use crate::analyze::phase::FrameRule;
use crate::analyze::phase::Role::{Serve, Stage};
use crate::model::explain::Phase::{
    CudaGraphCapture as G, Inference as I, KvCacheAlloc as K, WeightsLoad as W,
};

/// A segment of the frame table (its place in the order: `rules.rs` `SEGMENTS`).
pub(super) const EATEN_DUNDERS: &[FrameRule] = &[
    // `__init__` (constructors that load, place or allocate; the segments named in each).
    r(
        "init",
        "faster_whisper/transcribe.py",
        W,
        Stage,
        "faster-whisper",
    ),
    r("init", "whisperx/diarize.py", W, Stage, "whisperx"),
    r("init", "exllamav2/cache.py", K, Stage, "exllamav2"),
    r(
        "init",
        "torch/distributed/fsdp/fully_sharded_data_parallel.py",
        W,
        Stage,
        "torch",
    ),
    r(
        "init",
        "tensorrt_llm/_torch/pyexecutor/model_engine.py",
        W,
        Stage,
        "tensorrt_llm",
    ),
    r(
        "init",
        "deepspeed/inference/engine.py",
        W,
        Stage,
        "deepspeed",
    ),
    r(
        "init",
        "deepspeed/runtime/zero/parameter_offload.py",
        W,
        Stage,
        "deepspeed",
    ),
    // `__call__` of pipelines, predictors and validators; `__next__` of a pipeline's batches;
    // `__enter__`/`__exit__` of `torch.cuda.graph`.
    r("call", "/pipelines/", I, Serve, "transformers/diffusers"),
    r("call", "engine/validator.py", I, Serve, "ultralytics"),
    r("call", "engine/predictor.py", I, Serve, "ultralytics"),
    r(
        "call",
        "detectron2/engine/defaults.py",
        I,
        Serve,
        "detectron2",
    ),
    r("call", "whisperx/diarize.py", I, Serve, "whisperx"),
    r(
        "next",
        "transformers/pipelines/pt_utils.py",
        I,
        Serve,
        "transformers",
    ),
    r("enter", "torch/cuda/graphs.py", G, Stage, "torch"),
    r("exit", "torch/cuda/graphs.py", G, Stage, "torch"),
];
