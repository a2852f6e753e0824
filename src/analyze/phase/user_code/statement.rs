//! The stage a statement of the caller's says by what it calls (`model =
//! AutoModel.from_pretrained(…)`, `loss.backward()`, `outputs = model.generate(…)`), and the
//! pieces of a statement other readings use (the callee, the receiver, a model's name).

use super::names::*;
use crate::model::explain::Phase;
use crate::parse::text::after_char_at;

/// Receivers that name a model (or a part of one) rather than its input: `model`, `self.unet`,
/// `text_encoder`, `resnet`, `MyNet(...)`.
pub(in crate::analyze::phase) fn module_like(receiver: &str) -> bool {
    const MODULES: &[&str] = &[
        "model",
        "models",
        "net",
        "network",
        "module",
        "pipe",
        "pipeline",
        "unet",
        "vae",
        "encoder",
        "decoder",
        "transformer",
        "llm",
        "backbone",
        "classifier",
        "generator",
        "discriminator",
        "teacher",
        "student",
    ];
    words(receiver).iter().any(|word| {
        MODULES.contains(&word.as_str())
            || (word.len() > 3 && (word.ends_with("net") || word.ends_with("model")))
    })
}

/// The expression a method is called on: `self.model.half()` before `.to(` → `self.model`
/// (calls that only change a dtype or mode are skipped); a constructor call `Linear(…)` is kept
/// as `Linear(`.
pub(in crate::analyze::phase) fn receiver(before: &str) -> String {
    let mut expr = before.trim_end();
    loop {
        let stripped = [
            ".half()",
            ".float()",
            ".bfloat16()",
            ".eval()",
            ".train()",
            ".cpu()",
        ]
        .iter()
        .find_map(|call| expr.strip_suffix(call));
        match stripped {
            Some(rest) => expr = rest,
            None => break,
        }
    }
    if let Some(open) = expr.strip_suffix(')').and_then(|_| matching_open(expr)) {
        // A call's result: keep the callee's name with its `(`.
        let callee = last_path(&expr[..open]);
        return format!("{callee}(");
    }
    last_path(expr).to_string()
}

/// The `(` that opens the call ending `expr`.
pub(in crate::analyze::phase) fn matching_open(expr: &str) -> Option<usize> {
    let mut depth = 0usize;
    for (at, c) in expr.char_indices().rev() {
        match c {
            ')' => depth += 1,
            '(' => {
                depth = depth.checked_sub(1)?;
                if depth == 0 {
                    return Some(at);
                }
            }
            _ => {}
        }
    }
    None
}

/// The trailing dotted name of an expression: `x = self.model` → `self.model`.
pub(in crate::analyze::phase) fn last_path(expr: &str) -> &str {
    let start = expr
        .rfind(|c: char| !(c.is_alphanumeric() || c == '_' || c == '.'))
        .map_or(0, |at| after_char_at(expr, at));
    &expr[start..]
}

/// The last identifier of a dotted name: `self.model` → `model`.
pub(in crate::analyze::phase) fn last_name(path: &str) -> &str {
    path.trim_end_matches('(')
        .rsplit('.')
        .next()
        .unwrap_or_default()
}

/// Where `code` calls `.method(`.
pub(in crate::analyze::phase) fn calls(code: &str, method: &str) -> Option<usize> {
    let pattern = format!(".{method}(");
    code.find(&pattern)
}

/// The stage a statement runs, with what in it shows that.
pub fn statement_phase(code: &str) -> Option<(Phase, &'static str)> {
    let code = code.trim();
    // `for i, (x, y) in enumerate(train_loader):` — a loop over the training (or evaluation)
    // data.
    if let Some(iterable) = code
        .strip_prefix("for ")
        .and_then(|rest| rest.split_once(" in "))
        .map(|(_, iterable)| iterable)
    {
        let train = words(iterable)
            .iter()
            .any(|w| w == "train" || w == "training");
        let eval = words(iterable)
            .iter()
            .any(|w| INFERENCE_WORDS.contains(&w.as_str()));
        return match (train, eval) {
            (true, false) => Some((Phase::TrainingStep, "a loop over the training data")),
            (false, true) => Some((Phase::Inference, "a loop over evaluation data")),
            _ => None,
        };
    }
    let compact: String = code.chars().filter(|c| !c.is_whitespace()).collect();
    let found: Vec<(Phase, &'static str)> = [
        (
            callees(code).any(|name| name.ends_with("backward")),
            Phase::TrainingStep,
            "a backward pass",
        ),
        (
            // A GAN's discriminator applied (`real_logit = D(real_img)`, `pred_fake =
            // self.netD(fake_AB.detach())`, `discriminator(images)`): only its training runs
            // the discriminator (sampling runs the generator alone).
            callees(code).any(|name| {
                matches!(
                    name,
                    "D" | "netD"
                        | "net_D"
                        | "netD_A"
                        | "netD_B"
                        | "discriminator"
                        | "Discriminator"
                )
            }),
            Phase::TrainingStep,
            "a GAN's discriminator applied",
        ),
        (
            calls(code, "step").is_some_and(|at| {
                let name = last_name(&receiver(&code[..at])).to_ascii_lowercase();
                name.contains("optim") || name.contains("scaler") || name == "opt"
            }),
            Phase::TrainingStep,
            "an optimizer step",
        ),
        (
            // A trainer's own step (TRL 0.4–0.11 `PPOTrainer.step(queries, responses, scores)`:
            // the PPO update's forward, backward and optimizer step; MXNet Gluon's
            // `trainer.step(batch_size)`: the optimizer's update), session 47.
            calls(code, "step").is_some_and(|at| {
                let name = last_name(&receiver(&code[..at])).to_ascii_lowercase();
                name.ends_with("trainer")
            }),
            Phase::TrainingStep,
            "a trainer's step",
        ),
        (
            // An exponential moving average of the weights, updated after each optimizer
            // step (timm `ModelEmaV2.update`, diffusers `EMAModel.step`, torch
            // `AveragedModel.update_parameters`, and the scripts' own `ema.update(model)`):
            // part of a training step.
            ["update", "step", "update_parameters"]
                .iter()
                .any(|method| {
                    calls(code, method).is_some_and(|at| {
                        words(&receiver(&code[..at]))
                            .iter()
                            .any(|w| w == "ema" || w == "swa")
                    })
                }),
            Phase::TrainingStep,
            "an update of the weights' moving average",
        ),
        (
            // Adam's moment updates, as torch's `optim/adam.py` / `adamw.py` `_single_tensor_adam`
            // (and DeepSpeed's, apex's and the scripts' copies of it) write them: `denom =
            // (exp_avg_sq.sqrt() / bias_correction2_sqrt).add_(eps)`, `exp_avg.lerp_(grad, 1 -
            // beta1)`, `exp_avg_sq.mul_(beta2).addcmul_(grad, grad, value=1 - beta2)`: an
            // optimizer step, quoted alone when a paste keeps only the failing line.
            code.contains("exp_avg")
                && [".mul_(", ".add_(", ".addcmul_(", ".sqrt()", ".lerp_("]
                    .iter()
                    .any(|update| code.contains(update)),
            Phase::TrainingStep,
            "Adam's moment update (an optimizer step)",
        ),
        (
            calls(code, "fit").is_some() || calls(code, "learn").is_some(),
            Phase::TrainingStep,
            "a training run",
        ),
        (
            calls(code, "train")
                .is_some_and(|at| words(&receiver(&code[..at])).iter().any(|w| w == "trainer")),
            Phase::TrainingStep,
            "a trainer's training run",
        ),
        (
            // (`chat`: vLLM's `LLM.chat` (vllm/entrypoints/llm.py) and the chat models'
            // `model.chat(tokenizer, query)` / `stream_chat` (ChatGLM's and Qwen's modeling
            // files) generate a reply.)
            [
                "generate",
                "predict",
                "transcribe",
                "infer",
                "evaluate",
                "chat",
                "stream_chat",
            ]
            .iter()
            .any(|method| calls(code, method).is_some()),
            Phase::Inference,
            "a generation, prediction or evaluation",
        ),
        (
            // Lightning's `Trainer.test` / `Trainer.validate` (lightning `trainer/trainer.py`)
            // run the test and validation loops: the model forward, no step.
            ["test", "validate"].iter().any(|method| {
                calls(code, method)
                    .is_some_and(|at| words(&receiver(&code[..at])).iter().any(|w| w == "trainer"))
            }),
            Phase::Inference,
            "a trainer's test or validation loop",
        ),
        (
            // A pipeline or generator object called on its inputs (`images = pipe(prompt)`,
            // `predictions = generator(prompts, …)`, transformers' `pipeline` objects, outlines'
            // generators).
            // (The object itself, not a module attribute: `self.proposal_generator(images)` and
            // a GAN's `self.generator(z)` run a network's forward.)
            !builds_pipeline(code)
                && (called_name(code).is_some_and(|name| words(name).iter().any(|w| w == "pipe"))
                    || called_path(code).is_some_and(|path| {
                        matches!(
                            path,
                            "pipeline"
                                | "generator"
                                | "predictor"
                                | "summarizer"
                                | "translator"
                                | "transcriber"
                                | "captioner"
                        )
                    })),
            Phase::Inference,
            "a pipeline run",
        ),
        (
            builds_pipeline(code),
            Phase::WeightsLoad,
            "a pipeline built (its model loaded onto the device)",
        ),
        (
            // `with torch.cuda.graph(g):` (torch `torch/cuda/graphs.py` `class graph`:
            // `capture_begin` on enter, `capture_end` on exit; an error raised on exit is shown
            // at the `with` line), `torch.cuda.make_graphed_callables(…)` and the `CUDAGraph`
            // methods capture a CUDA graph.
            captures_graph(code),
            Phase::CudaGraphCapture,
            "a CUDA graph capture",
        ),
        (
            converts_weights(code),
            Phase::FormatConversion,
            "a conversion of the model's weights",
        ),
        (
            reads_safetensors(code),
            Phase::WeightsLoad,
            "a tensor read from a checkpoint file",
        ),
        (
            ["from_pretrained", "from_single_file", "from_preset"]
                .iter()
                .any(|method| calls(code, method).is_some())
                || code.contains("load_state_dict(")
                || code.contains("torch.load("),
            Phase::WeightsLoad,
            "a weights load",
        ),
        (
            // JAX has no module to move: a model's parameters reach the GPU through
            // `jax.device_put` (`params = jax.device_put(restored)`, Flax's `variables`);
            // a batch put on the device (`jax.device_put(batch)`) names no weights.
            calls(code, "device_put").is_some()
                && words(code).iter().any(|w| {
                    [
                        "params",
                        "parameters",
                        "weights",
                        "variables",
                        "checkpoint",
                        "ckpt",
                    ]
                    .contains(&w.as_str())
                }),
            Phase::WeightsLoad,
            "parameters put on the device",
        ),
        (
            // A `torch.nn` module built on the device (`nn.EmbeddingBag(rows, dim,
            // device="cuda")`: the factory keyword of `torch/nn/modules/*`, PyTorch 1.9+,
            // allocates its parameters there): the model's weights created on the GPU.
            called_path(code).is_some_and(|path| {
                (path.starts_with("nn.") || path.starts_with("torch.nn."))
                    && last_name(path).starts_with(|c: char| c.is_ascii_uppercase())
            }) && code.replace(' ', "").contains("device="),
            Phase::WeightsLoad,
            "a module's weights created on the device",
        ),
        (
            // torch's own statement of `Module.to` (`torch/nn/modules/module.py` `convert`, 1.x
            // and 2.x: `return t.to(device, dtype if t.is_floating_point() or t.is_complex()
            // else None, non_blocking)`), left alone above the error when a paste keeps only
            // the last line of the traceback: each of the module's tensors moved to the device.
            // The same statement as Python 3.11+ prints it when torch 2.x spreads the call over
            // lines: `return t.to(` alone, the arguments on the lines below.
            code.replace(' ', "")
                .contains("t.to(device,dtypeift.is_floating_point()")
                || compact == "returnt.to(",
            Phase::WeightsLoad,
            "a module's tensors moved to the device (torch's Module.to)",
        ),
        (
            // accelerate's own statements of `set_module_tensor_to_device`
            // (`accelerate/utils/modeling.py`, 0.2x to 1.x: `new_value = value.to(device)`,
            // `new_value = old_value.to(device)`), which `from_pretrained` with a `device_map`
            // and `load_checkpoint_and_dispatch` call for each tensor of the checkpoint: left
            // alone above the error when a paste keeps only the last line of the traceback.
            compact == "new_value=value.to(device)" || compact == "new_value=old_value.to(device)",
            Phase::WeightsLoad,
            "a checkpoint's tensor placed on the device (accelerate's set_module_tensor_to_device)",
        ),
        (
            // A layer's parameter created as the model is built (`self.weight =
            // Parameter(torch.empty(out_features, in_features))`, as `torch/nn/modules/linear.py`
            // and the tensor-parallel layers of Megatron, fairscale and llama's reference code
            // write them; vLLM's `create_weights`: `weight = Parameter(torch.empty(sum(
            // output_partition_sizes), …))`): the weights allocated before any pass.
            {
                let target = compact.split('=').next().unwrap_or_default();
                (target.starts_with("self.") || target.contains("weight") || target == "bias")
                    && [
                        "=Parameter(torch.",
                        "=nn.Parameter(torch.",
                        "=torch.nn.Parameter(torch.",
                    ]
                    .iter()
                    .any(|call| compact.contains(call))
            },
            Phase::WeightsLoad,
            "a layer's parameter created as the model is built",
        ),
        (
            [".to(", ".cuda("].iter().any(|call| {
                code.match_indices(call).any(|(at, _)| {
                    let receiver = receiver(&code[..at]);
                    let callee_class = receiver.ends_with('(')
                        && last_name(&receiver).starts_with(|c: char| c.is_ascii_uppercase());
                    callee_class || (!receiver.ends_with('(') && module_like(&receiver))
                })
            }),
            Phase::WeightsLoad,
            "a model moved to the device",
        ),
    ]
    .into_iter()
    .filter(|(hit, _, _)| *hit)
    .map(|(_, phase, what)| (phase, what))
    .chain(named_calls(code))
    .collect();
    let first = *found.first()?;
    found
        .iter()
        .all(|(phase, _)| *phase == first.0)
        .then_some(first)
}

/// Whether a statement builds a transformers pipeline (`generator = pipeline('text-generation',
/// model='gpt2', device=0)`, `transformers.pipeline(task="asr", model=m)`): the factory
/// (`transformers/pipelines/__init__.py` `def pipeline(task=None, model=None, …)`) loads the
/// model and places it on the device. The object it returns, called on its inputs (`pipe(text)`,
/// `pipeline("a photo of a cat")` of a diffusers pipeline named so), runs it: a task's name or
/// the `task=` / `model=` keyword tells the two apart.
fn builds_pipeline(code: &str) -> bool {
    let Some(path) = called_path(code) else {
        return false;
    };
    if path != "pipeline" && path != "transformers.pipeline" {
        return false;
    }
    let Some(args) = code
        .split_once(path)
        .and_then(|(_, rest)| rest.strip_prefix('('))
    else {
        return false;
    };
    let compact: String = args.chars().filter(|c| !c.is_whitespace()).collect();
    let task = compact
        .strip_prefix(['\'', '"'])
        .and_then(|rest| rest.split(['\'', '"']).next())
        .is_some_and(|name| {
            !name.is_empty()
                && name
                    .chars()
                    .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-' || c == '_')
                && (name.contains('-') || matches!(name, "summarization" | "translation" | "ner"))
        });
    task || compact.contains("task=") || compact.contains("model=")
}

/// Whether a statement captures a CUDA graph (see `statement_phase`).
pub(in crate::analyze::phase) fn captures_graph(code: &str) -> bool {
    let compact: String = code.chars().filter(|c| !c.is_whitespace()).collect();
    [
        "cuda.graph(",
        "make_graphed_callables(",
        ".capture_begin(",
        ".capture_end(",
    ]
    .iter()
    .any(|call| compact.contains(call))
}

/// Whether a statement converts a model's weights after loading: transformers'
/// `PreTrainedModel.resize_token_embeddings` (`modeling_utils.py`: a new embedding matrix, the
/// old rows copied in), a function named for quantizing any object (`quantize_int8(w)`,
/// `dequantize_layer(l)`), or one named for converting, casting or repacking the weights
/// themselves (`convert_to_fp8(layer.weight)`, `repack_weights(sd)`; not
/// `convert_tokens_to_ids`).
pub(in crate::analyze::phase) fn converts_weights(code: &str) -> bool {
    const WEIGHTS: &[&str] = &[
        "weight",
        "weights",
        "state",
        "params",
        "parameters",
        "layer",
        "layers",
        "linear",
        "tensor",
        "tensors",
    ];
    let weights = words(code)
        .iter()
        .any(|word| WEIGHTS.contains(&word.as_str()));
    // An ONNX export (`torch.onnx.export(model, …)`, torch 1.x–2.x `torch/onnx/utils.py`;
    // `torch.onnx.dynamo_export`): the model traced and written as a graph.
    if code.contains("onnx.export(") || code.contains("onnx.dynamo_export(") {
        return true;
    }
    callees(code).any(|name| {
        let words = words(name);
        let verb = words.first().map(String::as_str).unwrap_or_default();
        name == "resize_token_embeddings"
            || matches!(verb, "quantize" | "quantise" | "dequantize" | "requantize")
            || (matches!(verb, "convert" | "cast" | "repack" | "pack") && weights)
    })
}

/// Whether a statement reads tensors from a safetensors checkpoint: `safe_open(path,
/// framework="pt", device="cuda")` and the handle's `get_tensor` / `get_slice`
/// (`safetensors` `safe_open`), `safetensors.torch.load_file(path, device=…)`. A TFLite
/// interpreter's `get_tensor` reads an output, not a checkpoint.
pub(in crate::analyze::phase) fn reads_safetensors(code: &str) -> bool {
    let handle = [".get_tensor(", ".get_slice("].iter().any(|call| {
        code.match_indices(call).any(|(at, _)| {
            let receiver = last_name(&receiver(&code[..at])).to_ascii_lowercase();
            !receiver.is_empty() && !receiver.contains("interp")
        })
    });
    handle
        || code.contains("safe_open(")
        || (code.contains("safetensors") && code.contains("load_file("))
}

/// The stages the functions a statement calls are named for (`inner_training_loop()`,
/// `run_evaluation(model)`, `pipe.load_lora_weights(p)`), with a library's plainer words (a
/// callee may be anyone's); `model.train()` / `model.eval()` only switch a mode.
pub(in crate::analyze::phase) fn named_calls(
    code: &str,
) -> impl Iterator<Item = (Phase, &'static str)> + '_ {
    code.match_indices('(').filter_map(move |(paren, _)| {
        let start = code[..paren]
            .rfind(|c: char| !(c.is_alphanumeric() || c == '_'))
            .map_or(0, |at| after_char_at(code, at));
        let name = &code[start..paren];
        let mode_switch = matches!(name, "train" | "eval") && code[paren..].starts_with("()");
        if name.is_empty() || mode_switch {
            return None;
        }
        library_name_phase(name).map(|phase| (phase, "a call of a function named for it"))
    })
}

/// The names a statement calls: `Variable._execution_engine.run_backward(` → `run_backward`.
pub(in crate::analyze::phase) fn callees(code: &str) -> impl Iterator<Item = &str> {
    code.match_indices('(').filter_map(|(paren, _)| {
        let start = code[..paren]
            .rfind(|c: char| !(c.is_alphanumeric() || c == '_'))
            .map_or(0, |at| after_char_at(code, at));
        let name = &code[start..paren];
        (!name.is_empty()).then_some(name)
    })
}

/// The dotted name a statement calls first at its top level: `x = self.pipe(p)` → `self.pipe`.
pub(in crate::analyze::phase) fn called_path(code: &str) -> Option<&str> {
    let value = code
        .split_once('=')
        .filter(|(target, _)| !target.contains('(') && !target.ends_with(['=', '!', '<', '>']))
        .map_or(code, |(_, value)| value)
        .trim_start()
        .trim_start_matches("return ")
        .trim_start_matches("await ");
    let name = &value[..value.find('(')?];
    (!name.is_empty()
        && name
            .chars()
            .all(|c| c.is_alphanumeric() || c == '_' || c == '.'))
    .then_some(name)
}

/// The name a statement calls first at its top level: `images = pipe(prompt).images` → `pipe`.
pub(in crate::analyze::phase) fn called_name(code: &str) -> Option<&str> {
    called_path(code).map(last_name)
}
