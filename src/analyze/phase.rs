//! Which phase failed: the last stage the log shows completed plus the one in
//! progress, refined by the failure message itself and by the frames of its traceback.
//!
//! Never guesses: when neither the log nor the traceback shows the phase, it is
//! [`Phase::Unknown`]. Before the server accepted requests, a user prompt cannot be the cause.

use crate::model::explain::{EventKind, Phase, PhaseReport};
use crate::model::failure::{OomKind, OomMessage};

/// How far the startup got, updated event by event (cheap: no allocation).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Progress {
    /// The last completed phase and the line that shows it.
    pub last_completed: Option<(Phase, u64)>,
    /// The last completed phase before `last_completed`'s (for a failure inside that one:
    /// vLLM sizes the KV cache, logs it, then fails its check of the context length).
    pub completed_before: Option<(Phase, u64)>,
    /// The phase a start marker opened and nothing closed yet.
    pub in_progress: Option<(Phase, u64)>,
    /// The line where the API said it accepts requests.
    pub server_ready: Option<u64>,
    /// The line where the engine said it finished initialising.
    pub engine_ready: Option<u64>,
    /// The first request line.
    pub first_request: Option<u64>,
    /// The line of the engine start (banner/config) of this run.
    pub started: Option<u64>,
    /// Training lines seen (a start line, an epoch header, a step's line). One alone shows the
    /// training started, not that a step completed.
    pub training_lines: u32,
    /// The last training line when it is a progress bar drawn at its total (`8/8`, 100 %): the
    /// loop it counts had ended: tqdm counts an item after the loop's body returns (`tqdm/std.py`
    /// `tqdm.__iter__`, 4.x: `for obj in iterable: yield obj; n += 1`), so an exception in the
    /// body leaves the bar short of its total. Set by the reader of the line's text, not by
    /// [`Progress::observe`].
    pub training_ended: Option<u64>,
    /// The line of the last model-loader metadata line (llama.cpp's `llama_model_loader: - kv
    /// 12: …`, `print_info: n_layer = 32`) that showed the weights' load in progress. The
    /// loader prints a hundred of them while it reads the file's header, before it allocates
    /// anything: a pasted log that ends among them was cut there, and does not show where
    /// the failure stated above it happened. Set by the reader of the line's text.
    pub loader_metadata: Option<u64>,
    /// Whether the app loads its models as a generation needs them (an image app: ComfyUI's
    /// `Requested to load WanVAE` after the sampler's bar), so that a load completed is no
    /// start-up stage of its own. Set by the reader of the engine.
    pub lazy_loads: bool,
    /// Whether a counted progress bar was drawn after the last completed load and before the
    /// failure (a pipeline's sampling bar `50/50` under `Loading pipeline components… 5/5`):
    /// the process had gone past its load, so a kill after it is not the load's. Set by the
    /// reader of the lines' text.
    pub bar_after_load: bool,
}

impl Progress {
    /// Whether the stage in progress was last shown by a model loader's metadata line (see
    /// [`Progress::loader_metadata`]).
    pub fn cut_in_loader_metadata(&self) -> bool {
        self.in_progress.is_some_and(|(phase, line)| {
            phase == Phase::WeightsLoad && self.loader_metadata == Some(line)
        })
    }

    /// Takes one timeline event into account.
    pub fn observe(&mut self, kind: EventKind, phase: Phase, line: u64) {
        use EventKind as K;
        match kind {
            K::EngineStart | K::DeviceInit | K::DownloadStart | K::DownloadDone => {
                self.started.get_or_insert(line);
                if self.last_completed.is_none() {
                    self.in_progress = Some((Phase::Startup, line));
                }
            }
            K::WeightsLoadStart | K::WeightsLoadProgress => {
                self.in_progress = Some((Phase::WeightsLoad, line));
            }
            // vLLM's `Loading weights took N seconds` ends `load_weights`, which reads the
            // weights onto the device; the model loader then runs the quantization method's
            // `process_weights_after_loading` (a repack, a conversion, or nothing), which logs no
            // line of its own (`model_loader/base_loader.py` `BaseModelLoader.load_model`,
            // 0.8–0.12): the weights are loaded, what runs next is not shown.
            K::WeightsRead => {
                self.complete(Phase::WeightsLoad, line);
                self.in_progress = None;
            }
            K::FormatConversion => self.in_progress = Some((Phase::FormatConversion, line)),
            K::ProfilingStart => self.in_progress = Some((Phase::Profiling, line)),
            K::CudaGraphCaptureStart => {
                self.in_progress = Some((Phase::CudaGraphCapture, line));
            }
            // vLLM logs the KV-cache size (and the concurrency it allows) while sizing the
            // cache, before allocating it: the allocation is what runs next.
            K::KvCachePlanned | K::KvConcurrency => {
                // A stage in progress before the cache is sized has ended: profiling (vLLM),
                // or the weights' upload (llama.cpp prints its buffers' sizes, then loads
                // their data, then creates the context).
                if let Some((phase @ (Phase::Profiling | Phase::WeightsLoad), _)) = self.in_progress
                {
                    self.complete(phase, line);
                }
                self.in_progress = Some((Phase::KvCacheAlloc, line));
            }
            K::WeightsLoaded | K::ProfilingDone | K::KvCacheAllocated | K::CudaGraphCaptureDone => {
                self.complete(phase, line);
                self.in_progress = None;
            }
            K::EngineReady => {
                self.engine_ready = Some(line);
                self.complete(phase, line);
                self.in_progress = None;
            }
            K::ServerReady => {
                self.server_ready.get_or_insert(line);
                self.in_progress = None;
            }
            K::Request | K::ServingStats | K::KvPressure => {
                self.first_request.get_or_insert(line);
                self.in_progress = Some((Phase::Inference, line));
            }
            K::TrainingStep => {
                self.training_lines = self.training_lines.saturating_add(1);
                self.complete(Phase::TrainingStep, line);
                self.in_progress = Some((Phase::TrainingStep, line));
            }
            // An evaluation pass of a training job: the model runs without a backward pass.
            K::Evaluation => self.in_progress = Some((Phase::Inference, line)),
            // A checkpoint save is no GPU stage: what runs during it is not shown.
            K::CheckpointSave => self.in_progress = None,
            // An engine build runs until another stage shows; what fails in it has no stage of
            // the list (`unknown`, told as a build in the evidence).
            K::EngineBuild => self.in_progress = Some((Phase::Unknown, line)),
            K::Compile | K::Traceback | K::Failure | K::Shutdown | K::FailuresOnly => {}
        }
    }

    fn complete(&mut self, phase: Phase, line: u64) {
        if let Some(last) = self.last_completed.filter(|(last, _)| *last != phase) {
            self.completed_before = Some(last);
        }
        self.last_completed = Some((phase, line));
    }
}

/// One traceback frame.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Frame {
    /// Line number of the `File "…"` line.
    pub line: u64,
    /// Function name.
    pub function: String,
    /// File path as printed.
    pub file: String,
    /// Not a frame the traceback printed: the function the statement under its innermost frame
    /// calls (the frames below were cut from the paste or filtered out, as JAX does); `line` is
    /// the statement's line and `file` the caller's.
    pub called: bool,
    /// The statement printed under the frame (`loss.backward()`), trimmed; `None` when the
    /// traceback prints none (Python before 3.x in some forms, Rich, pastes cut at the frame).
    pub code: Option<String>,
}

/// How a frame's phase counts when the frames of one traceback are read together.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    /// A stage of start-up (or a warm-up, a capture, a load): decides, and encloses the
    /// serving frames below it (vLLM's `profile_run` runs `execute_model`; TGI's `warmup` runs
    /// `generate_token`; SGLang's graph capture runs the model's forward).
    Stage,
    /// Serving a request or a training step: decides unless a stage frame encloses it.
    Serve,
    /// Moves weights onto the GPU (`Module.to`, accelerate's `set_module_tensor_to_device`):
    /// weights_load, unless an offload hook runs it inside a forward.
    Move,
    /// A hook that runs the forward of an offloaded model (accelerate `pre_forward`): moves
    /// below it belong to the forward, not to a load.
    Offload,
    /// Encloses several stages (vLLM `_initialize_kv_caches` profiles, then allocates): decides
    /// only when no deeper frame and no log line shows the stage.
    Wrapper,
}

/// One mapping of a traceback function to a phase, with where it comes from.
#[derive(Debug, Clone, Copy)]
pub struct FrameRule {
    /// The function name as the traceback prints it.
    pub function: &'static str,
    /// A fragment the path must contain (slashes normalised); empty for any file.
    pub path: &'static str,
    /// The phase it shows.
    pub phase: Phase,
    /// How it counts.
    pub role: Role,
    /// The library it comes from (docs/phases.md lists the source files and versions).
    pub engine: &'static str,
}

pub mod inference;
pub mod prose;
mod rules;
mod stage_line;
mod user_code;
pub use rules::FRAME_RULES;
use rules::NATIVE_BACKWARD;
pub use stage_line::{details_stage, stage_line_phase};
pub use user_code::{
    evaluation_name, is_library_file, name_phase, node_phase, reports_error, statement_phase,
    user_code_phase, words_phase, workflow_node_phase,
};

fn is_native_backward(function: &str, file: &str) -> bool {
    let native = file.ends_with(".so")
        || file.contains(".so.")
        || file.ends_with(".dll")
        || file == crate::parse::engine_log::NATIVE_FRAME_FILE;
    if !native {
        return false;
    }
    let node = function.match_indices("Backward").any(|(at, word)| {
        function[at + word.len()..]
            .bytes()
            .next()
            .is_some_and(|b| b.is_ascii_digit())
    });
    node || function.contains("_backward")
        || function == "Engine::evaluate_function"
        || function == "Engine::thread_main"
}

/// The rule for a frame, if any (paths are compared with `/` separators).
pub fn frame_rule(function: &str, file: &str) -> Option<&'static FrameRule> {
    if is_native_backward(function, file) {
        return Some(&NATIVE_BACKWARD);
    }
    let normalised;
    let file = if file.contains('\\') {
        normalised = file.replace('\\', "/");
        normalised.as_str()
    } else {
        file
    };
    // An empty function in a rule stands for any function of that path.
    FRAME_RULES.iter().find(|rule| {
        (rule.function == function || rule.function.is_empty())
            && (rule.path.is_empty() || file.contains(rule.path))
    })
}

/// The phase a traceback frame shows by itself, if any (offload hooks show none).
pub fn frame_phase(function: &str, file: &str) -> Option<Phase> {
    frame_rule(function, file)
        .filter(|rule| rule.role != Role::Offload)
        .map(|rule| rule.phase)
}

/// What the frames of one traceback show, read outermost first.
#[derive(Debug, Clone, Default)]
pub struct FramesVerdict<'a> {
    /// The deciding frame and its rule.
    pub decided: Option<(&'a Frame, &'static FrameRule)>,
    /// The deepest serving frame the deciding stage runs inside it (`execute_model` under
    /// `profile_run`).
    pub enclosed: Option<&'a Frame>,
    /// The training frame around an inference frame (evaluation inside training).
    pub around: Option<&'a Frame>,
    /// The deepest wrapper frame (used only when nothing else shows the stage).
    pub wrapper: Option<(&'a Frame, &'static FrameRule)>,
    /// A checkpoint save run from inside the training loop (`save_weights`, `_save_checkpoint`
    /// under the trainer's `train`): no stage of the list, so the training frame decides
    /// nothing.
    pub saving: Option<&'a Frame>,
}

/// Reads the frames (outermost first): the deepest deciding frame wins, except that a serving
/// frame inside a start-up stage belongs to that stage (warm-ups and profiling run the
/// model's forward), and a weight move inside an offload hook belongs to the forward.
pub fn read_frames(frames: &[Frame]) -> FramesVerdict<'_> {
    let mut verdict = FramesVerdict::default();
    let mut offload = false;
    let mut training: Option<&Frame> = None;
    // Inside the model's forward of a training step: the caller's functions named like an
    // evaluation below it (`forward` → `score = self.predict(xs)`, the scores the loss is taken
    // of) are part of that forward, not an evaluation pass (which runs the forward, not the
    // other way round).
    let mut training_forward = false;
    for frame in frames {
        if training.is_some() && is_forward(frame) {
            training_forward = true;
        }
        let Some(rule) = frame_rule(&frame.function, &frame.file) else {
            continue;
        };
        if training_forward && rule.phase == Phase::Inference && rule.engine == "user code" {
            continue;
        }
        let enclosing_stage = verdict
            .decided
            .is_some_and(|(_, decided)| matches!(decided.role, Role::Stage | Role::Move));
        // A quantizer or converter placing the model (or a block of it) on the GPU for its
        // calibration (AutoRound's `try_cache_inter_data_gpucpu` → accelerate's
        // `dispatch_model`): the move is the conversion's.
        let converting = verdict.decided.is_some_and(|(_, decided)| {
            decided.role == Role::Stage && decided.phase == Phase::FormatConversion
        });
        match rule.role {
            Role::Wrapper => verdict.wrapper = Some((frame, rule)),
            Role::Offload => offload = true,
            Role::Move if offload => {}
            Role::Move if converting => verdict.enclosed = Some(frame),
            Role::Serve if enclosing_stage => verdict.enclosed = Some(frame),
            _ => {
                if rule.role == Role::Serve && rule.phase == Phase::TrainingStep {
                    training = Some(frame);
                }
                verdict.around = if rule.phase == Phase::Inference {
                    training
                } else {
                    None
                };
                verdict.decided = Some((frame, rule));
                verdict.enclosed = None;
            }
        }
    }
    evaluation_inside_training(frames, &mut verdict);
    save_inside_training(frames, &mut verdict);
    placement_inside_training(frames, &mut verdict);
    verdict
}

/// The model placed on the GPU by the training loop's own statement, the deepest frame the
/// traceback printed of it (transformers 3.x–4.1 `Trainer.train`: `self.model =
/// model.to(self.args.device)`; a loop's `model.cuda()` before its first step): the weights'
/// move, not a step.
static PLACEMENT_IN_TRAINING: FrameRule = FrameRule {
    function: "",
    path: "",
    phase: Phase::WeightsLoad,
    role: Role::Move,
    engine: "model placement inside training",
};

fn placement_inside_training<'a>(frames: &'a [Frame], verdict: &mut FramesVerdict<'a>) {
    let Some((decided, under)) = under_training(frames, verdict) else {
        return;
    };
    if under
        .iter()
        .any(|frame| frame_rule(&frame.function, &frame.file).is_some())
    {
        return;
    }
    let moves = decided
        .code
        .as_deref()
        .and_then(statement_phase)
        .is_some_and(|(phase, _)| phase == Phase::WeightsLoad);
    if moves {
        verdict.decided = Some((decided, &PLACEMENT_IN_TRAINING));
        verdict.around = None;
    }
}

/// The training-loop frame that decided the stage, if one did, and the frames deeper than it.
fn under_training<'a>(
    frames: &'a [Frame],
    verdict: &FramesVerdict<'a>,
) -> Option<(&'a Frame, &'a [Frame])> {
    let (decided, rule) = verdict.decided?;
    if rule.phase != Phase::TrainingStep || rule.role != Role::Serve {
        return None;
    }
    let at = frames
        .iter()
        .position(|frame| std::ptr::eq(frame, decided))?;
    Some((decided, &frames[at + 1..]))
}

/// Whether a function's name says it saves (`save_weights`, `_save_checkpoint`, `on_save`).
fn names_a_save(function: &str) -> bool {
    function
        .split(|c: char| !c.is_ascii_alphanumeric())
        .any(|word| word == "save" || word == "saving")
}

/// The function a statement calls first (`model.save_pretrained(output_dir)` →
/// `save_pretrained`, `torch.save(state, path)` → `save`).
fn first_call(statement: &str) -> Option<&str> {
    let open = statement.find('(')?;
    let name = statement[..open]
        .trim_end()
        .rsplit(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .next()?;
    (!name.is_empty()).then_some(name)
}

/// A checkpoint save run from inside a training loop, told by a deeper frame no rule reads
/// whose name says it saves (`save_weights`, `_save_checkpoint`, `save_pretrained`,
/// `save_file`, `torch.save`): writing a checkpoint is not a training step (and no other stage
/// of the list), so the training frame around it does not decide.
fn save_inside_training<'a>(frames: &'a [Frame], verdict: &mut FramesVerdict<'a>) {
    let Some((decided, under)) = under_training(frames, verdict) else {
        return;
    };
    let deeper = under.iter().find(|frame| {
        !frame.called
            && frame_rule(&frame.function, &frame.file).is_none()
            && names_a_save(&frame.function)
    });
    // … or by the statement the deepest printed frame was running, when nothing deeper was
    // printed (`trainer.train()` had returned and `❱ 280 │ model.save_pretrained(output_dir)`
    // ran in the caller's `train`).
    let deepest = frames.iter().rev().find(|frame| !frame.called);
    let statement = deepest.filter(|frame| {
        frame
            .code
            .as_deref()
            .and_then(first_call)
            .is_some_and(names_a_save)
            && (std::ptr::eq(*frame, decided)
                || under.iter().any(|below| std::ptr::eq(below, *frame)))
    });
    if let Some(save) = deeper.or(statement) {
        verdict.decided = None;
        verdict.enclosed = None;
        verdict.around = None;
        verdict.saving = Some(save);
    }
}

/// An evaluation pass run from inside a training loop, told by a deeper frame no rule reads:
/// the loop's own evaluation hooks (Lightning `_on_evaluation_epoch_end` → the module's
/// `on_validation_epoch_end`) or the caller's `validate(…)` called from its `train()`. The
/// innermost stage decides: the pass is inference (the training frame stays as what encloses
/// it).
static EVALUATION_IN_TRAINING: FrameRule = FrameRule {
    function: "",
    path: "",
    phase: Phase::Inference,
    role: Role::Serve,
    engine: "evaluation inside training",
};

/// A model's forward pass frame (`forward`, PyTorch's `Module.__call__` / `_call_impl`), as
/// printed by the traceback.
fn is_forward(frame: &Frame) -> bool {
    !frame.called
        && matches!(
            frame.function.as_str(),
            "forward" | "_call_impl" | "__call__"
        )
}

fn evaluation_inside_training<'a>(frames: &'a [Frame], verdict: &mut FramesVerdict<'a>) {
    let Some((decided, under)) = under_training(frames, verdict) else {
        return;
    };
    // An evaluation pass runs the model's forward, not the other way round: a function named
    // like one below a `forward` (`forward` → `self.predict(xs)` computing the scores the loss
    // is taken of) is part of the training step's forward pass.
    let deeper = under
        .iter()
        .take_while(|frame| !is_forward(frame))
        .filter(|frame| {
            !frame.called
                && frame_rule(&frame.function, &frame.file).is_none()
                && evaluation_name(&frame.function, is_library_file(&frame.file))
        })
        .last();
    // A save deeper than the evaluation-named frame (transformers `_maybe_log_save_evaluate` →
    // `callback_handler.on_save` → a callback's `on_save`: the function logs, saves and
    // evaluates, and the save is what ran) is read as a save (`save_inside_training`).
    let position = |found: &Frame| under.iter().position(|frame| std::ptr::eq(frame, found));
    let deepest_save = under
        .iter()
        .rposition(|frame| !frame.called && names_a_save(&frame.function));
    if let (Some(evaluation), Some(save)) = (deeper, deepest_save) {
        if position(evaluation).is_some_and(|at| save > at) {
            return;
        }
    }
    if let Some(evaluation) = deeper {
        verdict.around = Some(decided);
        verdict.decided = Some((evaluation, &EVALUATION_IN_TRAINING));
        verdict.enclosed = None;
    }
}

/// The phase the failure message itself names, when its family is specific to one phase.
pub fn message_phase(message: &OomMessage) -> Option<Phase> {
    match message.kind {
        // TensorRT-LLM's KV-cache manager refusing the blocks free memory allows
        // (`batch_manager/kvCacheManager.cpp` `KVCacheManager::KVCacheManager`, 0.7–0.12:
        // "maxTokensInPagedKvCache (%d) must be large enough to process at least 1 sequence"):
        // raised while the cache is sized and allocated.
        _ if message.text.contains("maxTokensInPagedKvCache") => Some(Phase::KvCacheAlloc),
        // THC (PyTorch ≤ 1.0) setting up the device's random generator at CUDA's lazy
        // initialisation (`THCTensorRandom.cu:25` `initializeGenerator`: curand's states), before
        // any model work.
        OomKind::CudaErrorOutOfMemory if message.text.contains("THCTensorRandom.cu") => {
            Some(Phase::Startup)
        }
        // TensorFlow creating a device's CUDA context when its session starts
        // (`core/common_runtime/gpu/gpu_device.cc` `BaseGPUDeviceFactory::CreateDevices`, 1.x–2.x:
        // "CUDA runtime implicit initialization on GPU:%d failed. Status: %s"): before any model
        // work.
        _ if message
            .text
            .contains("CUDA runtime implicit initialization on GPU") =>
        {
            Some(Phase::Startup)
        }
        // PyTorch counting the devices when CUDA first initialises (`c10/cuda/CUDAFunctions.cpp`
        // `device_count_impl`, warned by `torch.cuda.is_available()` / `device_count()`: "CUDA
        // initialization: Unexpected error from cudaGetDeviceCount(). … Error 2: out of memory"):
        // the driver could not make the context, before any model work.
        _ if message
            .text
            .contains("Unexpected error from cudaGetDeviceCount") =>
        {
            Some(Phase::Startup)
        }
        // Theano creating its CNMeM pool of GPU memory when the device is initialised, at
        // `import theano` (`theano/sandbox/cuda/__init__.py` `use`: "ERROR (theano.sandbox.cuda):
        // … Initialisation of device gpu failed: initCnmem: cnmemInit call failed!
        // Reason=CNMEM_STATUS_OUT_OF_MEMORY"): before any model work.
        _ if message.text.contains("initCnmem") => Some(Phase::Startup),
        // A video encoder's session or a decoder being created (FFmpeg's `libavcodec/nvenc.c`
        // `nvenc_open_session` / `nvenc_setup_encoder`: `OpenEncodeSessionEx failed`,
        // `InitializeEncoder failed`; NVDEC's `cuvidCreateDecoder`): the codec opens before
        // any frame is coded.
        _ if [
            "OpenEncodeSessionEx",
            "InitializeEncoder",
            "cuvidCreateDecoder",
        ]
        .iter()
        .any(|call| message.text.contains(call)) =>
        {
            Some(Phase::Startup)
        }
        // MLC-LLM's budget when its engine is created: the Python engine sizing the KV cache
        // (`_estimate_max_total_sequence_length`: "Cannot estimate KV cache capacity"), the
        // C++ engine's check of weights and buffers against the card before anything is loaded
        // ("Insufficient GPU memory error: The available single GPU memory is …"), or the
        // former's refusal quoted without its head ("The model weight size may be larger than
        // GPU memory size"): frameworks.rs.
        _ if message.text.contains("Cannot estimate KV cache capacity") => {
            Some(Phase::KvCacheAlloc)
        }
        _ if message
            .text
            .contains("Insufficient GPU memory error: The available single GPU memory")
            || message.text.contains("may be larger than GPU memory size") =>
        {
            Some(Phase::Startup)
        }
        OomKind::VllmStartupFreeMemory => Some(Phase::Startup),
        OomKind::VllmNoCacheBlocks | OomKind::VllmMaxSeqLenTooLarge => Some(Phase::KvCacheAlloc),
        OomKind::VllmWarmupOom | OomKind::TgiWarmup => Some(Phase::Profiling),
        // ExLlama's autosplit raises it while placing the layers (and their cache) on the
        // GPUs in turn: the model's load.
        OomKind::ExllamaSplit => Some(Phase::WeightsLoad),
        // llama.cpp fills its KV cells only while decoding requests (its warm-up decodes one
        // token): the context ran full while serving.
        OomKind::ContextFull => Some(Phase::Inference),
        // ollama refuses to load a model whose estimate exceeds free RAM (`llm/server.go`
        // `NewLlamaServer`: "model requires more system memory (%s) than is available (%s)").
        OomKind::HostMemory if message.text.contains("requires more system memory") => {
            Some(Phase::WeightsLoad)
        }
        // torch's own DLLs failing to load on Windows when the paging file cannot back them
        // (`torch/__init__.py` `_load_dll_libraries`: `err.strerror += f' Error loading "{dll}"
        // or one of its dependencies.'` after `[WinError 1455] The paging file is too small`):
        // raised by `import torch`, in the program or in each DataLoader worker it spawns,
        // before any model work.
        OomKind::HostMemory if loads_torch_dll(&message.text) => Some(Phase::Startup),
        // A checkpoint file the host could not map into memory (`unable to mmap N bytes from
        // file <model-00001-of-00002.safetensors>: Cannot allocate memory`): the weights' read.
        OomKind::HostMemory if maps_a_weights_file(&message.text) => Some(Phase::WeightsLoad),
        // TensorRT-LLM's executor report names the component whose creation failed
        // (`_ExecutorCreationStage` values in `_torch/pyexecutor/py_executor_creator.py`, 1.0):
        // `Model` / `Draft model for speculative decoding` (the `PyTorchModelEngine`, which loads
        // the weights), `KV cache` / `Initial KV cache (temporary for KV cache size estimation)`
        // (`KvCacheCreator.build_managers`); the other stages are left to other evidence.
        OomKind::TensorrtAlloc => {
            let component = message
                .text
                .split("could not be created:")
                .nth(1)?
                .trim_start();
            if component.starts_with("KV cache") || component.starts_with("Initial KV cache") {
                Some(Phase::KvCacheAlloc)
            } else if component.starts_with("Model")
                || component.starts_with("Draft model for speculative decoding")
            {
                Some(Phase::WeightsLoad)
            } else {
                None
            }
        }
        // A running XLA program names itself (`[executable_name='jit_train_step']`, PjRt's
        // executable name is the jitted function's): a train step, or a generation/sampling.
        OomKind::XlaResourceExhausted => {
            crate::parse::engine_log::xla_executable_phase(&message.text)
        }
        OomKind::SglangMemory if message.text.contains("mem-fraction-static") => {
            Some(Phase::KvCacheAlloc)
        }
        // The scheduler ran out of KV-cache tokens for a batch of requests being served.
        OomKind::SglangMemory
            if crate::parse::oom_text::sglang_token_pool_exhausted(&message.text) =>
        {
            Some(Phase::Inference)
        }
        // A ggml host buffer (`CPU`, `CUDA_Host` pinned memory) that could not be allocated: host
        // RAM, but its purpose says the stage as for a device buffer.
        OomKind::HostMemory => match message.details.buffer_purpose.as_deref() {
            Some("compute") => Some(Phase::Profiling),
            Some("kv cache") => Some(Phase::KvCacheAlloc),
            Some("model weights") => Some(Phase::WeightsLoad),
            _ => None,
        },
        OomKind::LlamacppAlloc => {
            // A compute buffer reserved from a batch's decode (`llama_decode` → `decode` →
            // `sched_reserve` / the graph's allocation, `src/llama-context.cpp`): a batch was
            // being evaluated, as `compute_failed` reads the decode's own words. (Told by the
            // failure's own text naming the call, `… → llama_decode`, cut or not.)
            if message.details.buffer_purpose.as_deref() == Some("compute")
                && message.text.contains("llama_decod")
            {
                return Some(Phase::Inference);
            }
            match message.details.buffer_purpose.as_deref() {
                Some("compute") => return Some(Phase::Profiling),
                Some("kv cache") => return Some(Phase::KvCacheAlloc),
                Some("model weights") => return Some(Phase::WeightsLoad),
                _ => {}
            }
            let text = &message.text;
            if text.contains("kv cache") || text.contains("KV cache") || text.contains("kv_cache") {
                Some(Phase::KvCacheAlloc)
            } else if text.contains("compute") || text.contains("gallocr") {
                Some(Phase::Profiling)
            } else if text.contains("model buffer")
                || text.contains("loading model")
                || text.contains("unable to allocate")
            {
                Some(Phase::WeightsLoad)
            } else {
                None
            }
        }
        _ => None,
    }
}

/// An engine's own words wrapping a memory error on the error's line: the stage that raised it.
/// (phrase, phase, where the engine writes it).
pub const WRAPPING_PHRASES: &[(&str, Phase, &str)] = &[
    (
        "Unable to warmup model",
        Phase::Profiling,
        "TGI router start-up, `router/src/main.rs` (0.9 panics there with it: `main.rs:216`)",
    ),
    (
        "Capture cuda graph failed",
        Phase::CudaGraphCapture,
        "SGLang `CudaGraphRunner.__init__` (`srt/model_executor/cuda_graph_runner.py`)",
    ),
    (
        "Request failed during generation",
        Phase::Inference,
        "TGI router `InferError::GenerationError` (`router/src/infer/mod.rs`, 0.9–3.x), relayed \
         by the router and its clients",
    ),
    (
        "[async_llm_engine.py:",
        Phase::Inference,
        "vLLM V0 `AsyncLLMEngine._log_task_completion` (`vllm/engine/async_llm_engine.py`): the \
         error that ended the engine's background loop (`run_engine_loop`)",
    ),
    (
        "could not be loaded:",
        Phase::WeightsLoad,
        "InvokeAI 2.x model manager (`ldm/invoke/model_manager.py`: `** model … could not be \
         loaded: …`)",
    ),
    // An OpenAI-compatible server answers a failed request with an error body: vLLM
    // `ErrorResponse` (`entrypoints/openai/protocol.py`), SGLang and llama.cpp's server
    // `{"error": {"code": 500, "message": …}}`; the OpenAI Python client relays it as
    // `Error code: 500 - {…}` (`openai/_exceptions.py` `APIStatusError`). Either way a request
    // was being served.
    (
        "{\"error\":{\"message\":",
        Phase::Inference,
        "an OpenAI-compatible server's error response body (SGLang, vLLM, llama.cpp server)",
    ),
    (
        "{\"error\": {\"message\":",
        Phase::Inference,
        "an OpenAI-compatible server's error response body (SGLang, vLLM, llama.cpp server)",
    ),
    (
        "Error code: 500 - {",
        Phase::Inference,
        "the OpenAI Python client relaying a server's error (`openai/_exceptions.py`)",
    ),
    (
        "Error merging checkpoints",
        Phase::FormatConversion,
        "AUTOMATIC1111 checkpoint merger (`modules/extras.py` `run_modelmerger`): the weights of \
         two checkpoints combined into a new one",
    ),
    // === Apps' words around an error, read from their sources (issue 13, second blind
    // batch) ===
    (
        "ERROR diffusion_model.",
        Phase::WeightsLoad,
        "ComfyUI's model patcher as Fooocus ships it (`ldm_patched/modules/model_patcher.py` \
         `calculate_weight`: `print(\"ERROR\", key, e)`): merging a LoRA into one UNet weight \
         while the model is patched and moved to the GPU, before sampling",
    ),
    (
        "ERROR lora diffusion_model.",
        Phase::WeightsLoad,
        "ComfyUI's model patcher (`comfy/model_patcher.py` / `comfy/lora.py` \
         `calculate_weight`: `ERROR {patch_type} {key} {e}`): merging a LoRA into one UNet \
         weight while the model is loaded",
    ),
    (
        "Error processing or transcribing",
        Phase::Inference,
        "subgen (`subgen.py` `gen_subtitles`: `Error processing or transcribing {file}: {e}`): \
         transcribing one media file with faster-whisper / stable-ts",
    ),
];

/// The phase an engine's wrapping words on the failure's own line name, with the phrase.
pub fn wrapping_phrase(line: &str) -> Option<(Phase, &'static str)> {
    WRAPPING_PHRASES
        .iter()
        .find(|(phrase, _, _)| line.contains(phrase))
        .map(|(phrase, phase, _)| (*phase, *phrase))
}

/// What the phase decision looks at.
#[derive(Debug, Clone, Copy)]
pub struct PhaseInputs<'a> {
    /// The failure that matters (first GPU OOM, else first failure).
    pub failure: Option<&'a OomMessage>,
    /// How far the run got when the failure was seen.
    pub progress: &'a Progress,
    /// Frames of the failure's traceback, outermost first.
    pub frames: &'a [Frame],
    /// An explicit phase line (vLLM ≥0.14 `Failed to load model - not enough GPU memory`).
    pub hint: Option<(u64, Phase)>,
    /// A line printed just under the failure that shows the stage running (a progress bar
    /// redrawn under the traceback, a router span, a footer); used when nothing before the
    /// failure shows it.
    pub late: Option<(u64, Phase)>,
    /// The stage the words next to the failure name, when nothing else shows it: (line, phase,
    /// what the words are, the words) — the app's words wrapping the error on its line, the
    /// message logged with the traceback (`logger.exception`), or a statement printed above the
    /// error of a traceback cut before its frames (see `user_code::words_phase`).
    pub nearby: Option<(u64, Phase, &'static str, &'a str)>,
    /// Whether the last training line shows a step done (a loss, a step count, a bar past
    /// zero), not only the training's start (`Epoch 1/3`, `***** Running training *****`): see
    /// [`shows_a_completed_step`].
    pub training_step_shown: bool,
}

/// Whether a training line shows a step done: a loss figure, a count of steps, iterations or
/// batches past zero (`9/20`, `step 120`), not an epoch header (`Epoch 1/3`, printed when the
/// epoch starts) or a start line (`***** Running training *****`, `Starting training`).
pub fn shows_a_completed_step(text: &str) -> bool {
    let lower = text.to_lowercase();
    let words: Vec<&str> = lower
        .split(|c: char| !(c.is_alphanumeric() || c == '/' || c == '_'))
        .filter(|word| !word.is_empty())
        .collect();
    if words
        .iter()
        .any(|word| matches!(*word, "loss" | "train_loss" | "training_loss" | "grad_norm"))
    {
        return true;
    }
    let mut count_seen = false;
    for (at, word) in words.iter().enumerate() {
        let after_epoch = at > 0 && words[at - 1].starts_with("epoch");
        // A zero-padded pair is a date (`06/09`), not a count.
        let padded = |number: &str| number.len() > 1 && number.starts_with('0');
        if let Some((done, total)) = word
            .split_once('/')
            .filter(|(done, total)| !padded(done) && !padded(total))
        {
            if let (Ok(done), Ok(_)) = (done.parse::<u64>(), total.parse::<u64>()) {
                if !after_epoch {
                    if done > 0 {
                        return true;
                    }
                    count_seen = true;
                }
            }
        }
        let unit = matches!(
            *word,
            "step" | "steps" | "iter" | "iteration" | "batch" | "global_step"
        );
        if unit && !count_seen {
            let number = words.get(at + 1).and_then(|next| next.parse::<u64>().ok());
            if number.is_some_and(|number| number > 0) {
                return true;
            }
        }
    }
    false
}

/// Whether a host-memory message is torch's DLL failing to load (`Error loading
/// "C:\…\torch\lib\cufft64_10.dll" or one of its dependencies.`).
fn loads_torch_dll(text: &str) -> bool {
    let path = text.replace('\\', "/").to_ascii_lowercase();
    text.contains("Error loading") && path.contains("/torch/lib/") && path.contains(".dll")
}

/// Whether a host-memory message is a checkpoint file failing to map (`unable to mmap N bytes
/// from file <….safetensors>`, a `.gguf`, `.bin`, `.pt`, `.pth`, `.ckpt` file).
fn maps_a_weights_file(text: &str) -> bool {
    let Some(at) = text.find("unable to mmap") else {
        return false;
    };
    let rest = &text[at..];
    let file = rest.split_once(" from file ").map(|(_, file)| file);
    file.is_some_and(|file| {
        let name = file
            .split([':', '>', '\'', '"', ' '])
            .find(|part| !part.is_empty() && *part != "<")
            .unwrap_or_default()
            .trim_start_matches('<')
            .to_ascii_lowercase();
        [".safetensors", ".gguf", ".bin", ".pt", ".pth", ".ckpt"]
            .iter()
            .any(|extension| name.ends_with(extension))
    })
}

/// Decides `failed_in`, `last_completed`, `server_was_ready` with evidence.
pub fn decide(inputs: PhaseInputs<'_>) -> PhaseReport {
    let progress = inputs.progress;
    let mut evidence = Vec::new();
    let server_was_ready = match (progress.server_ready, progress.first_request) {
        (Some(line), _) => {
            evidence.push(format!("line {line}: the server was accepting requests"));
            Some(true)
        }
        (None, Some(line)) => {
            evidence.push(format!("line {line}: a request was being served"));
            Some(true)
        }
        (None, None) if progress.started.is_some() || progress.last_completed.is_some() => {
            Some(false)
        }
        _ => None,
    };

    let from_message = inputs.failure.and_then(|message| {
        let phase = message_phase(message)?;
        // A ggml compute buffer reserved again for a request the server was evaluating (an
        // image's embedding, a long prompt: the graph outgrew the one reserved at context
        // creation), the request's line the last stage before it (session 41); in the host's
        // memory too (a CPU buffer of the image encoder's graph, session 50).
        if let Some((Phase::Inference, line)) = progress.in_progress.filter(|&(_, line)| {
            phase == Phase::Profiling
                && matches!(message.kind, OomKind::LlamacppAlloc | OomKind::HostMemory)
                && line < message.line
        }) {
            return Some((
                Phase::Inference,
                format!(
                    "line {line}: a request was being evaluated; line {}: the compute buffer \
                     reserved again for it could not be allocated",
                    message.line
                ),
            ));
        }
        Some((
            phase,
            format!(
                "line {}: the message itself is raised while {}",
                message.line,
                phase.short()
            ),
        ))
    });
    let from_hint = inputs.hint.map(|(line, phase)| {
        (
            phase,
            format!(
                "line {line}: the engine says the failure happened while {}",
                phase.short()
            ),
        )
    });
    let frames = read_frames(inputs.frames);
    let from_frames = frames.decided.map(|(frame, rule)| {
        // The rules of phase `unknown` are checkpoint saves (`rules.rs`): no stage of the run.
        let shows = |rule: &FrameRule| {
            if rule.phase == Phase::Unknown {
                "a checkpoint save, which is no stage of the run"
            } else {
                rule.phase.describe()
            }
        };
        let mut why = if frame.called {
            format!(
                "line {}: the traceback's last frame ({}) calls `{}`, which is {}",
                frame.line,
                short_path(&frame.file),
                frame.function,
                shows(rule)
            )
        } else {
            format!(
                "line {}: traceback frame `{}` ({}) is {}",
                frame.line,
                frame.function,
                short_path(&frame.file),
                shows(rule)
            )
        };
        if let Some(inner) = frames.enclosed {
            why.push_str(&format!(
                "; the deeper `{}` (line {}) runs inside it",
                inner.function, inner.line
            ));
        }
        if let Some(outer) = frames.around {
            why.push_str(&format!(
                "; evaluation inside training (`{}`, line {})",
                outer.function, outer.line
            ));
        }
        (rule.phase, why)
    });
    let from_frames = from_frames.or_else(|| {
        frames.saving.map(|save| {
            (
                Phase::Unknown,
                format!(
                    "line {}: traceback frame `{}` ({}) saves a checkpoint from inside the \
                     training loop: writing it is not a training step, and no stage of the list",
                    save.line,
                    save.function,
                    short_path(&save.file)
                ),
            )
        })
    });
    // A raw CUDA out-of-memory error from `Module.to` before any GPU work: creating the CUDA
    // context failed (see `context_creation`).
    let from_frames =
        context_creation(inputs.failure, &frames, inputs.frames, progress).or(from_frames);
    // The caller's own code (its statements, then its functions' names), only where no
    // library frame decides.
    let from_user = if frames.decided.is_none() {
        user_code::user_code_phase(inputs.frames)
    } else {
        None
    };
    let from_wrapper = frames.wrapper.map(|(frame, rule)| {
        // A start-up wrapper encloses all of an engine's start (its loads, profiling and
        // captures too): not only the device checks that `Phase::describe` names.
        let encloses = if rule.phase == Phase::Startup {
            "start-up"
        } else {
            rule.phase.describe()
        };
        (
            rule.phase,
            format!(
                "line {}: traceback frame `{}` ({}) encloses {encloses} (no deeper frame shows \
                 more)",
                frame.line,
                frame.function,
                short_path(&frame.file),
            ),
        )
    });
    // One training line that shows no step done (`Epoch 1/3`, `***** Running training *****`)
    // shows the training started, not that a step completed.
    let training_started_only = progress.training_lines <= 1
        && !inputs.training_step_shown
        && progress.last_completed.map(|(phase, _)| phase) == Some(Phase::TrainingStep);
    // A training loop whose bar reached its total had ended: what ran after it (a save, an
    // evaluation, the teardown) is not shown, so the training does not decide.
    let ended = progress
        .in_progress
        .filter(|&(phase, line)| {
            phase == Phase::TrainingStep && progress.training_ended == Some(line)
        })
        .map(|(_, line)| line);
    if let Some(line) = ended {
        evidence.push(format!(
            "line {line}: the training's progress bar reached its total: the loop had ended, \
             and no line shows what ran after it"
        ));
    }
    let from_progress = progress
        .in_progress
        .filter(|_| ended.is_none())
        .map(|(phase, line)| {
            let why = if phase == Phase::Unknown {
                format!(
                    "line {line}: an engine build had started and the log shows no end of it: \
                 building an engine is none of the stages"
                )
            } else if phase == Phase::TrainingStep && training_started_only {
                format!(
                    "line {line}: training had started (no later line shows a step completed) and \
                 the log shows no end of it"
                )
            } else {
                format!(
                    "line {line}: {} had started and the log shows no end of it",
                    phase.as_str()
                )
            };
            (phase, why)
        });
    // A process killed (by the kernel's OOM killer, a launcher's SIGKILL) right after its
    // weights' load reached its end, with no line of a later stage between: what filled the
    // host's memory is the load (the weights it read, still held as the load finished), so the
    // load is the stage that failed. (A GPU failure after a load shows its own stage.)
    let killed_after_load = match (inputs.failure, progress.last_completed) {
        (Some(message), Some((Phase::WeightsLoad, line)))
            if message.kind == OomKind::KilledBySignal
                && !progress.lazy_loads
                && !progress.bar_after_load
                && progress.in_progress.is_none()
                && progress.server_ready.is_none()
                && progress.first_request.is_none()
                && line < message.line =>
        {
            Some((
                Phase::WeightsLoad,
                format!(
                    "line {line}: the weights' load had just ended when the process was killed \
                     (line {}), and no line shows a later stage: the memory it filled is the \
                     load's",
                    message.line
                ),
            ))
        }
        _ => None,
    };
    let from_progress = from_progress.or(killed_after_load);
    let from_late = inputs.late.map(|(line, phase)| {
        (
            phase,
            format!(
                "line {line}: printed under the failure, it shows {} running",
                phase.as_str()
            ),
        )
    });
    let from_nearby = inputs.nearby.map(|(line, phase, what, words)| {
        (
            phase,
            format!(
                "line {line}: {what}, `{}`, names {}",
                user_code::clip(words.trim()),
                user_code::noun(phase)
            ),
        )
    });
    let from_serving = match (server_was_ready, progress.in_progress) {
        (Some(true), None) => Some((
            Phase::Inference,
            "no startup stage was in progress after the server became ready".to_string(),
        )),
        _ => None,
    };

    // Evaluation run from inside a training loop, told by the program's own lines: the log's
    // last stage is training, but a line printed after its last training line (a `validating
    // …` status line, a bar of the evaluation, the app's words on the error's line) names an
    // evaluation pass. The later line shows what ran when it failed.
    let from_progress = match (from_progress, inputs.nearby) {
        (Some((Phase::TrainingStep, _)), Some((line, Phase::Inference, what, words)))
            if progress
                .in_progress
                .is_some_and(|(phase, at)| phase == Phase::TrainingStep && at < line) =>
        {
            let at = progress.in_progress.map_or(0, |(_, at)| at);
            Some((
                Phase::Inference,
                format!(
                    "line {line}: {what}, `{}`, names an evaluation pass, printed after the last \
                     training line (line {at}): evaluation inside training",
                    user_code::clip(words.trim())
                ),
            ))
        }
        (other, _) => other,
    };
    // A training job's generic entry (`train`, any file: the rule of last resort for a trainer's
    // whole run) encloses its set-up passes too: where the program's own line printed just
    // before the failure announces a pass that runs the model on the training inputs for its
    // outputs (`caching latents...`, `running evaluation`), that pass is what ran.
    let generic_train = frames
        .decided
        .filter(|(_, rule)| rule.function == "train" && rule.path.is_empty());
    let from_frames = match (&from_frames, inputs.nearby, generic_train) {
        (
            Some((Phase::TrainingStep, _)),
            Some((line, Phase::Inference, what, words)),
            Some((frame, _)),
        ) if what.starts_with("the program's log line announcing") => Some((
            Phase::Inference,
            format!(
                "line {line}: {what}, `{}`, names a pass that runs the model on inputs, \
                     inside the training job's `{}` (line {}), which encloses its set-up too",
                user_code::clip(words.trim()),
                frame.function,
                frame.line
            ),
        )),
        _ => from_frames,
    };
    // A checkpoint quantized as it loads (transformers' GPTQ quantizer runs inside
    // `from_pretrained`, its bar `Quantizing model.layers blocks :  46%|` drawn above the
    // traceback of the app's `load_model`): the loader's frames enclose the conversion, and the
    // conversion's own line, the last stage the log opened, says which part of the load failed.
    // Not a move of the weights onto the GPU, which is the load's own work, and only a line
    // printed right above the traceback (the bar the exception broke), not a conversion's
    // command pasted before the run.
    let loading = frames
        .decided
        .is_some_and(|(_, rule)| rule.role != Role::Move && rule.phase == Phase::WeightsLoad);
    let first_frame = inputs.frames.iter().map(|frame| frame.line).min();
    let from_frames = match (&from_frames, progress.in_progress, first_frame) {
        (Some((Phase::WeightsLoad, why)), Some((Phase::FormatConversion, line)), Some(first))
            if loading && line < first && first - line <= 3 =>
        {
            Some((
                Phase::FormatConversion,
                format!(
                    "line {line}: the conversion's own line is the last stage the log opened, \
                     inside the loader ({why}): the checkpoint is converted as it loads"
                ),
            ))
        }
        _ => from_frames,
    };
    // A full disk fails a write (a checkpoint, a cache, a log, a download), none of the stages:
    // the stage the log shows running, a line under the failure or the words next to it say
    // what the run was doing, not which write failed. Only a frame, the engine's own line or
    // the message decides (a checkpoint save inside training is told by its frame, above).
    let (from_progress, from_late, from_nearby, from_serving) = match inputs.failure {
        Some(message) if message.kind == OomKind::DiskFull => {
            // A conversion's job is the write of its output (ollama `create` writes the GGUF
            // it converts into an `fp16…` temp file): a full disk while one runs failed it.
            let converting = from_progress
                .clone()
                .filter(|(phase, _)| *phase == Phase::FormatConversion);
            let read = [&from_progress, &from_late, &from_nearby, &from_serving];
            if converting.is_none() && read.iter().any(|found| found.is_some()) {
                evidence.push(format!(
                    "line {}: a full disk fails a write (a checkpoint, a cache, a log), which is \
                     none of the stages; the stage the log shows running does not say which \
                     write failed",
                    message.line
                ));
            }
            (converting, None, None, None)
        }
        _ => (from_progress, from_late, from_nearby, from_serving),
    };
    // An explicit line of the engine beats the message family (llama.cpp's compute-buffer
    // failure is profiling at context creation, inference in `llama_kv_cache_update_impl`).
    // An engine's line that names its warm-up as a whole (TGI's `Method Warmup encountered an
    // error.`, read as profiling) encloses the KV cache's allocation and the graphs' capture
    // that the warm-up runs after its profiling pass: a frame of either says more (session 38).
    let moved = frames
        .decided
        .is_some_and(|(_, rule)| rule.role == Role::Move && rule.phase == Phase::WeightsLoad);
    let converting = frames
        .decided
        .is_some_and(|(_, rule)| rule.role == Role::Stage && rule.phase == Phase::FormatConversion);
    let from_hint = match (from_hint, &from_frames) {
        (
            Some((Phase::Profiling, _)),
            Some((phase @ (Phase::KvCacheAlloc | Phase::CudaGraphCapture), why)),
        ) => Some((*phase, why.clone())),
        // An app's words that name a generation (ComfyUI's `Error occurred when executing
        // XlabsSampler:`) over frames that move the model onto the GPU (`inmodel.
        // diffusion_model.to(device)` → `Module.to` → `_apply`): a sampler loads its model as
        // it starts, and the move failed, not the sampling (session 41).
        (Some((Phase::Inference, _)), Some((Phase::WeightsLoad, why))) if moved => {
            Some((Phase::WeightsLoad, why.clone()))
        }
        // A runtime's words that a model was being run (ONNX Runtime's `Non-zero status code
        // returned while running MatMulNBits node`) under frames of a conversion that runs it
        // (Olive's `run_pass` calibrating a quantization): the conversion failed.
        (Some((Phase::Inference, _)), Some((Phase::FormatConversion, why))) if converting => {
            Some((Phase::FormatConversion, why.clone()))
        }
        (hint, _) => hint,
    };
    let decided = from_hint
        .or(from_message)
        .or(from_frames)
        .or(from_user)
        .or(from_progress)
        .or(from_late)
        .or(from_wrapper)
        .or(from_nearby)
        .or(from_serving);
    let failed_in = match decided {
        Some((phase, why)) => {
            evidence.push(why);
            phase
        }
        None => {
            evidence.push(crate::model::explain::NO_STAGE_SHOWN.to_string());
            Phase::Unknown
        }
    };

    // A startup stage cannot be both done and the one that failed: the log showed part of it
    // (vLLM logs the KV-cache size, then its check of the context length fails).
    let mut completed = Vec::new();
    let last_completed = match progress.last_completed {
        Some((phase, line)) if phase == failed_in && phase.is_startup() => {
            completed.push(format!(
                "line {line}: {} had begun (the log shows part of it) and failed before it ended",
                phase.as_str()
            ));
            progress.completed_before.map(|(phase, line)| {
                completed.push(format!(
                    "line {line}: the log shows {} completed",
                    phase.as_str()
                ));
                phase
            })
        }
        // The training's start line alone: nothing completed yet (said with the stage running).
        Some((Phase::TrainingStep, _)) if training_started_only => None,
        Some((phase, line)) => {
            completed.push(format!(
                "line {line}: the log shows {} completed",
                phase.as_str()
            ));
            Some(phase)
        }
        None => None,
    };
    evidence.splice(0..0, completed);

    let prompt_can_be_cause = if failed_in.is_startup() || server_was_ready == Some(false) {
        Some(false)
    } else if failed_in == Phase::Inference {
        Some(true)
    } else {
        None
    };
    PhaseReport {
        failed_in,
        last_completed,
        server_was_ready,
        prompt_can_be_cause,
        evidence,
    }
}

/// The process's first CUDA work failing to create its context. PyTorch's caching allocator
/// reports a failed `cudaMalloc` with its own message ("CUDA out of memory. Tried to allocate …",
/// `c10/cuda/CUDACachingAllocator.cpp`, since 0.4.1); the CUDA runtime's bare
/// `cudaErrorMemoryAllocation` ("CUDA error: out of memory", through `C10_CUDA_CHECK`) comes from
/// elsewhere: the lazy initialisation that creates the context, a cuBLAS handle, a kernel launch,
/// NCCL. When it is raised by `Module.to` (`to` → `_apply` → `convert`), no library stage frame
/// surrounds it and the log shows no GPU stage before it, the move is the first CUDA call: the
/// context could not be created, nothing was loaded yet. (With the caching allocator switched off,
/// `PYTORCH_NO_CUDA_MEMORY_CACHING=1`, a failed `cudaMalloc` reads the same: a rare set-up this
/// reading gets wrong.)
fn context_creation(
    failure: Option<&OomMessage>,
    verdict: &FramesVerdict<'_>,
    frames: &[Frame],
    progress: &Progress,
) -> Option<(Phase, String)> {
    let message = failure?;
    // Or THC's (PyTorch ≤ 1.0) at the generator's set-up, which the first CUDA use runs
    // (`THCTensorRandom.cu` `initializeGenerator`, curand's states: `cuda runtime error (2) : out
    // of memory at /pytorch/aten/src/THC/THCTensorRandom.cu:25`).
    let raw = message.kind == OomKind::CudaErrorOutOfMemory
        && (message.text.contains("CUDA error: out of memory")
            || message.text.contains("THCTensorRandom.cu"));
    let (frame, rule) = verdict.decided?;
    let torch_move = |rule: &FrameRule| rule.role == Role::Move && rule.engine == "torch";
    let only_torch_moves = frames
        .iter()
        .filter_map(|frame| frame_rule(&frame.function, &frame.file))
        .all(torch_move);
    let nothing_before = progress.last_completed.is_none()
        && progress.first_request.is_none()
        && progress
            .in_progress
            .is_none_or(|(phase, _)| phase == Phase::Startup);
    (raw && torch_move(rule) && only_torch_moves && nothing_before).then(|| {
        (
            Phase::Startup,
            format!(
                "line {}: traceback frame `{}` ({}) moves a module to the GPU and failed with \
                 the CUDA runtime's own out-of-memory error, not PyTorch's \"Tried to \
                 allocate\" (which a failed allocation of a tensor prints), with no GPU work \
                 before it: creating the CUDA context failed",
                frame.line,
                frame.function,
                short_path(&frame.file)
            ),
        )
    })
}

/// The last two components of a path (`vllm/worker/worker.py` → `worker/worker.py`).
pub fn short_path(path: &str) -> String {
    let parts: Vec<&str> = path.rsplit(['/', '\\']).take(2).collect();
    parts.into_iter().rev().collect::<Vec<_>>().join("/")
}

#[cfg(test)]
mod tests;

#[cfg(test)]
mod s38p3_tests;
#[cfg(test)]
mod s39b_tests;
#[cfg(test)]
mod s40f2_tests;
#[cfg(test)]
mod s40f4_tests;
#[cfg(test)]
mod s41_tests;
#[cfg(test)]
mod s42_tests;
#[cfg(test)]
mod s43_tests;
#[cfg(test)]
mod s44_tests;
#[cfg(test)]
mod s45_tests;
#[cfg(test)]
mod s46_tests;
#[cfg(test)]
mod s47_tests;
#[cfg(test)]
mod s48_tests;
#[cfg(test)]
mod s49_tests;
#[cfg(test)]
mod s50_tests;
#[cfg(test)]
mod s51_tests;
#[cfg(test)]
mod s52_tests;
#[cfg(test)]
mod s54_tests;
#[cfg(test)]
mod s55_tests;
#[cfg(test)]
mod s56_tests;
