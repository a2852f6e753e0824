//! The fixed phrases of the reporter's words and the stage each names (read by `prose`): the
//! stages by their usual phrases, and a trained model applied to the user's inputs.

use crate::model::explain::Phase;

/// A phrase (lowercase) and the stage it names.
pub(super) const PHRASES: &[(&str, Phase)] = &[
    // Training and fine-tuning.
    ("during training", Phase::TrainingStep),
    // Supervised fine-tuning by its short name (`oom when sft Qwen1.5-32B`, `OOM during SFT`),
    // and a model said to be in training (`OOMs immediately when being tuned with GaLore`).
    ("during sft", Phase::TrainingStep),
    ("when sft", Phase::TrainingStep),
    ("while sft", Phase::TrainingStep),
    ("when being trained", Phase::TrainingStep),
    ("when being tuned", Phase::TrainingStep),
    ("when being fine-tuned", Phase::TrainingStep),
    ("while being trained", Phase::TrainingStep),
    ("while being tuned", Phase::TrainingStep),
    // The failure's words with the stage right after (`CUDA out of memory in training`, `OOM
    // in inference`), as issue titles write them.
    ("out of memory in training", Phase::TrainingStep),
    ("oom in training", Phase::TrainingStep),
    ("out of memory in inference", Phase::Inference),
    ("oom in inference", Phase::Inference),
    // The same with the stage's noun (`during the phase of training, I have an error about
    // memory cuda`; not `in the training phase`, which an evaluation inside it is too: `the VAE
    // during inference in the training phase`).
    ("during the phase of training", Phase::TrainingStep),
    ("during the training phase", Phase::TrainingStep),
    ("during the training stage", Phase::TrainingStep),
    ("during the training process", Phase::TrainingStep),
    // (`The error was got in the step of training`; session 45.)
    ("in the step of training", Phase::TrainingStep),
    // (`out of memory in the stage of training`, a title; session 56.)
    ("in the stage of training", Phase::TrainingStep),
    ("in the process of training", Phase::TrainingStep),
    // The training's course (`as training progressed (around 3 hours), the error appeared`).
    ("as training progressed", Phase::TrainingStep),
    ("training failed midway", Phase::TrainingStep),
    ("training crashed midway", Phase::TrainingStep),
    ("midway through training", Phase::TrainingStep),
    ("midway through the training", Phase::TrainingStep),
    ("as the training progressed", Phase::TrainingStep),
    ("as training progresses", Phase::TrainingStep),
    ("as the training progresses", Phase::TrainingStep),
    ("during the process of training", Phase::TrainingStep),
    ("while training", Phase::TrainingStep),
    ("when training", Phase::TrainingStep),
    ("trying to train", Phase::TrainingStep),
    ("try to train", Phase::TrainingStep),
    ("tried to train", Phase::TrainingStep),
    ("training on ", Phase::TrainingStep),
    ("training with ", Phase::TrainingStep),
    ("training a ", Phase::TrainingStep),
    ("training an ", Phase::TrainingStep),
    ("start training", Phase::TrainingStep),
    ("starting training", Phase::TrainingStep),
    ("training starts", Phase::TrainingStep),
    // The training's first moments, a moment of its course (`Errors encountered at the
    // beginning of training`): its first steps (AUDIT.md, "the job or the stage", 2c).
    ("at the beginning of training", Phase::TrainingStep),
    ("at the beginning of the training", Phase::TrainingStep),
    ("at the very beginning of training", Phase::TrainingStep),
    ("at the start of training", Phase::TrainingStep),
    ("at the start of the training", Phase::TrainingStep),
    // The training said to be under way when it failed (`The training has started, at such
    // an early stage it crashes`).
    ("training has started", Phase::TrainingStep),
    ("training started", Phase::TrainingStep),
    ("training had started", Phase::TrainingStep),
    ("training has begun", Phase::TrainingStep),
    ("training is running", Phase::TrainingStep),
    ("training was running", Phase::TrainingStep),
    ("training step", Phase::TrainingStep),
    ("training loop", Phase::TrainingStep),
    ("train step", Phase::TrainingStep),
    ("component: training", Phase::TrainingStep),
    ("during fine-tuning", Phase::TrainingStep),
    ("while fine-tuning", Phase::TrainingStep),
    ("when fine-tuning", Phase::TrainingStep),
    ("trying to fine-tune", Phase::TrainingStep),
    ("try to fine-tune", Phase::TrainingStep),
    ("during finetuning", Phase::TrainingStep),
    ("while finetuning", Phase::TrainingStep),
    ("when finetuning", Phase::TrainingStep),
    ("trying to finetune", Phase::TrainingStep),
    // The backward pass and epochs exist only in training.
    ("backward pass", Phase::TrainingStep),
    ("during backward", Phase::TrainingStep),
    ("during the backward", Phase::TrainingStep),
    ("while backward", Phase::TrainingStep),
    ("while backwarding", Phase::TrainingStep),
    ("processing backward", Phase::TrainingStep),
    ("in backward", Phase::TrainingStep),
    ("in the backward", Phase::TrainingStep),
    ("at backward", Phase::TrainingStep),
    ("backpropagation", Phase::TrainingStep),
    // (Not `epoch` alone: a command line's `--epochs 300` says what was asked, not where it
    // failed.)
    ("first epoch", Phase::TrainingStep),
    ("second epoch", Phase::TrainingStep),
    ("next epoch", Phase::TrainingStep),
    ("each epoch", Phase::TrainingStep),
    ("an epoch", Phase::TrainingStep),
    // A model fitted, as scikit-learn-style APIs name their training (`I'm having this CUDA
    // error when fitting the classifier`, pytorch-tabnet's `clf.fit`; session 48). Not `fit`
    // alone: a model that does not fit names the memory.
    ("fitting the model", Phase::TrainingStep),
    ("fitting the classifier", Phase::TrainingStep),
    ("fitting the regressor", Phase::TrainingStep),
    ("fitting a model", Phase::TrainingStep),
    ("fitting my model", Phase::TrainingStep),
    ("训练", Phase::TrainingStep),
    ("微调", Phase::TrainingStep),
    ("学習", Phase::TrainingStep),
    ("학습", Phase::TrainingStep),
    ("durante el entrenamiento", Phase::TrainingStep),
    ("al entrenar", Phase::TrainingStep),
    ("durante o treinamento", Phase::TrainingStep),
    ("ao treinar", Phase::TrainingStep),
    // QLoRA is a fine-tuning method (Dettmers et al. 2023, "QLoRA: Efficient Finetuning of
    // Quantized LLMs"; PEFT's and axolotl's QLoRA recipes): a QLoRA run is a training.
    ("qlora", Phase::TrainingStep),
    // Loading the weights.
    // The model as the subject of its load (`killed … while model is loading`, `it fails
    // while the model was loading`).
    ("model is loading", Phase::WeightsLoad),
    ("model was loading", Phase::WeightsLoad),
    ("model loading", Phase::WeightsLoad),
    ("loading the model", Phase::WeightsLoad),
    ("loading model", Phase::WeightsLoad),
    ("loading a model", Phase::WeightsLoad),
    ("load the model", Phase::WeightsLoad),
    ("load model", Phase::WeightsLoad),
    ("load a model", Phase::WeightsLoad),
    ("loading the checkpoint", Phase::WeightsLoad),
    ("loading checkpoint", Phase::WeightsLoad),
    ("loading the weights", Phase::WeightsLoad),
    ("loading weights", Phase::WeightsLoad),
    ("can't load", Phase::WeightsLoad),
    ("cannot load", Phase::WeightsLoad),
    ("can not load", Phase::WeightsLoad),
    ("unable to load", Phase::WeightsLoad),
    ("model loading", Phase::WeightsLoad),
    ("weight loading", Phase::WeightsLoad),
    ("weights loading", Phase::WeightsLoad),
    // The model prepared for its run (accelerate's `prepare` moves it onto the device;
    // SimpleTuner's `model preparation phase`): its weights being put on the GPU.
    ("model preparation", Phase::WeightsLoad),
    // The weights prepared for the device (stable-diffusion.cpp's runners upload or convert
    // their weights before a graph runs: an issue's `(weight preparation OOM)`).
    ("weight preparation", Phase::WeightsLoad),
    ("weights preparation", Phase::WeightsLoad),
    ("preparing the weights", Phase::WeightsLoad),
    ("preparing the model", Phase::WeightsLoad),
    ("加载模型", Phase::WeightsLoad),
    ("模型加载", Phase::WeightsLoad),
    ("読み込", Phase::WeightsLoad),
    ("모델 로드", Phase::WeightsLoad),
    ("cargar el modelo", Phase::WeightsLoad),
    ("carregar o modelo", Phase::WeightsLoad),
    // Inference, generation, sampling (AUTOMATIC1111's "hires fix" is the upscaling pass of
    // an image generation).
    // Tokens coming out of a generation (`I get this error after the first token is emitted`).
    ("after the first token", Phase::Inference),
    ("after the first few tokens", Phase::Inference),
    ("during decoding", Phase::Inference),
    ("while decoding", Phase::Inference),
    ("when upscaling", Phase::Inference),
    ("while upscaling", Phase::Inference),
    ("during upscaling", Phase::Inference),
    ("during inference", Phase::Inference),
    // An RL trainer's rollout (verl, OpenRLHF, TRL's GRPO): the policy generating answers
    // (`CUDA OOM happens when actor model is rolling out in GRPO`, `OOM during rollout`).
    ("during rollout", Phase::Inference),
    ("during the rollout", Phase::Inference),
    ("rolling out", Phase::Inference),
    // … and its weight sync: the trainer's weights loaded into the inference engine (`OOM
    // during weight sync`, `OOM when syncing weights to vLLM`).
    ("weight sync", Phase::WeightsLoad),
    ("weights sync", Phase::WeightsLoad),
    ("syncing weights", Phase::WeightsLoad),
    ("syncing the weights", Phase::WeightsLoad),
    ("weight synchronization", Phase::WeightsLoad),
    ("while inferencing", Phase::Inference),
    ("when inferencing", Phase::Inference),
    ("running inference", Phase::Inference),
    ("run inference", Phase::Inference),
    // … with an article (`I was running an inference for a complex with N_token 2372`).
    // (Not `run the inference code` or `the inference example`: the job, not the stage; nor a
    // guess at what a tool does, `it needs to load the model to run an inference process`.)
    ("running an inference", Phase::Inference),
    // A title that files the failure under inference (`Inference OOM for separation`).
    ("inference oom", Phase::Inference),
    // An audio separation model applied to a recording (Demucs, SpeechBrain's SepFormer:
    // `When doing speech separation with the WHAMR!16K model`).
    ("speech separation", Phase::Inference),
    ("source separation", Phase::Inference),
    ("while separating", Phase::Inference),
    ("when separating", Phase::Inference),
    ("at inference", Phase::Inference),
    // The failure placed on the inference (`CUDA out of memory error on inference`, `OOM in
    // inference`), an inference run named as the subject (`the inference of a video file`).
    ("on inference", Phase::Inference),
    ("in inference", Phase::Inference),
    ("inference of", Phase::Inference),
    ("inference problem", Phase::Inference),
    ("inference error", Phase::Inference),
    // A request to a server is served by the model (`when I make a request to the API`).
    ("make a request", Phase::Inference),
    ("send a request", Phase::Inference),
    ("sending a request", Phase::Inference),
    ("the first request", Phase::Inference),
    // … by its sender (`Then you send your first request and the whole thing crashes`).
    ("your first request", Phase::Inference),
    // … or its prompt (`boots, captures graphs, answers /health 200, dies on the first prompt`).
    ("the first prompt", Phase::Inference),
    // Requests named by which of them fail (`I'm getting this error now on certain requests`)
    // or where they go (`any request to the endpoint resolves to the following error`).
    ("on certain requests", Phase::Inference),
    ("on some requests", Phase::Inference),
    ("request to the endpoint", Phase::Inference),
    ("requests to the endpoint", Phase::Inference),
    // A chat app's answers stopped coming (`After some time it just stops generating answers`).
    ("generating answers", Phase::Inference),
    ("generating replies", Phase::Inference),
    ("my first request", Phase::Inference),
    ("send your request", Phase::Inference),
    // A chat app's message to its model (`When sending a message the colab Console spits out
    // this Error`, SillyTavern and text-generation-webui front ends): a reply generated.
    // A request posted or handled by a server (`while I post a request server throw an runtime
    // error`, `keeping allocat memory when handling a request so it crashed after a few
    // request`).
    ("post a request", Phase::Inference),
    ("posted a request", Phase::Inference),
    ("handling a request", Phase::Inference),
    ("handle a request", Phase::Inference),
    ("after a few request", Phase::Inference),
    ("sending a message", Phase::Inference),
    ("send a message", Phase::Inference),
    ("sent a message", Phase::Inference),
    ("sending a prompt", Phase::Inference),
    ("send a prompt", Phase::Inference),
    // Questions put to a chat app, a conversation's turns (`询问问题，大约3个问题后，内存溢出`:
    // asking questions, out of memory after about three; `after a few rounds of dialogue`).
    ("询问问题", Phase::Inference),
    ("个问题后", Phase::Inference),
    ("轮对话", Phase::Inference),
    ("问了几个问题", Phase::Inference),
    ("after a few questions", Phase::Inference),
    ("after several questions", Phase::Inference),
    ("after a few rounds of", Phase::Inference),
    ("after a few messages", Phase::Inference),
    ("after several messages", Phase::Inference),
    // An image asked of a loaded model (`the moment I asked for an image`).
    ("asked for an image", Phase::Inference),
    ("ask for an image", Phase::Inference),
    ("asking for an image", Phase::Inference),
    ("during generation", Phase::Inference),
    ("at generation", Phase::Inference),
    ("while running the model", Phase::Inference),
    // A diffusion pipeline's last step, the VAE turning latents into pixels (ComfyUI's
    // `VAEDecode` node, diffusers' `vae.decode`): part of generating the image.
    ("vae decod", Phase::Inference),
    // An LLM server's prompt pass (`long-context prefill exceeds the profiled peak`).
    ("during prefill", Phase::Inference),
    ("during the prefill", Phase::Inference),
    ("context prefill", Phase::Inference),
    ("when generating", Phase::Inference),
    ("while generating", Phase::Inference),
    ("image generation", Phase::Inference),
    ("video generation", Phase::Inference),
    ("generating an image", Phase::Inference),
    ("generating images", Phase::Inference),
    ("generate an image", Phase::Inference),
    ("during sampling", Phase::Inference),
    ("while sampling", Phase::Inference),
    ("hires fix", Phase::Inference),
    ("hires. fix", Phase::Inference),
    ("high res fix", Phase::Inference),
    ("high-res fix", Phase::Inference),
    ("highres fix", Phase::Inference),
    // ComfyUI's sampler nodes named in its error report or the reporter's words (`nodes.py`
    // `KSampler`, `comfy_extras/nodes_custom_sampler.py` `SamplerCustomAdvanced`): the
    // denoising of a generation.
    ("ksampler", Phase::Inference),
    ("samplercustom", Phase::Inference),
    ("推理", Phase::Inference),
    // Evaluation and validation run the model forward without a step (transformers
    // `Trainer.evaluate`, Lightning's validation loop): the corpus files them as inference.
    ("during evaluation", Phase::Inference),
    ("during validation", Phase::Inference),
    ("while evaluating", Phase::Inference),
    ("when evaluating", Phase::Inference),
    ("评估", Phase::Inference),
    ("评测", Phase::Inference),
    // A server's warm-up before it serves, the pass that sizes its memory with dummy inputs:
    // vLLM V1's sampler warm-up (`v1/worker/gpu_model_runner.py` `_dummy_sampler_run`, whose
    // error says `CUDA out of memory occurred when warming up sampler`; `gpu_worker.py`
    // `compile_or_warm_up_model`), TGI's `warmup` (`server/text_generation_server/server.py`
    // `Warmup`, the launcher's `Unable to warmup model`) (`CUDA OOM during sampler warmup`,
    // `gemma-7b warmup encountered an error`). Not `after warmup` (denied, the warm-up passed).
    ("sampler warmup", Phase::Profiling),
    ("sampler warm-up", Phase::Profiling),
    ("warming up sampler", Phase::Profiling),
    ("warming up the sampler", Phase::Profiling),
    ("warmup encountered", Phase::Profiling),
    ("warm-up encountered", Phase::Profiling),
    ("during warmup", Phase::Profiling),
    ("during the warmup", Phase::Profiling),
    ("during warm-up", Phase::Profiling),
    ("during the warm-up", Phase::Profiling),
    ("during model warmup", Phase::Profiling),
    // The warm-up named as what ran out (`deepgemm warmup OOM`, `warmup out of memory`).
    ("warmup oom", Phase::Profiling),
    ("warm-up oom", Phase::Profiling),
    ("warmup out of memory", Phase::Profiling),
    ("warmup cuda out of memory", Phase::Profiling),
    // A training's course named by how far it had got without a count (`OOM part way through
    // epoch`, `halfway through training`) or by its iterations going on (`CUDA out of memory
    // with training iterations`, `memory grows as training progresses`) (AUDIT.md, session 15,
    // rule 2c).
    ("way through epoch", Phase::TrainingStep),
    ("way through the epoch", Phase::TrainingStep),
    ("way through an epoch", Phase::TrainingStep),
    ("way through training", Phase::TrainingStep),
    ("way through the training", Phase::TrainingStep),
    ("halfway through epoch", Phase::TrainingStep),
    ("halfway through the epoch", Phase::TrainingStep),
    ("halfway through training", Phase::TrainingStep),
    ("halfway through the training", Phase::TrainingStep),
    ("midway through training", Phase::TrainingStep),
    ("midway through the training", Phase::TrainingStep),
    ("middle of an epoch", Phase::TrainingStep),
    ("middle of the epoch", Phase::TrainingStep),
    // (The same said short: `Out of memory mid epoch`, `it crashes mid-training`.)
    ("mid epoch", Phase::TrainingStep),
    ("mid-epoch", Phase::TrainingStep),
    ("mid training", Phase::TrainingStep),
    ("mid-training", Phase::TrainingStep),
    ("with training iterations", Phase::TrainingStep),
    ("with the training iterations", Phase::TrainingStep),
    ("with training steps", Phase::TrainingStep),
    ("as training progresses", Phase::TrainingStep),
    ("as the training progresses", Phase::TrainingStep),
    ("as training goes on", Phase::TrainingStep),
    ("as the training goes on", Phase::TrainingStep),
    // An engine's start-up before it serves (`the shard fails to start`), and its CUDA-graph
    // capture.
    ("at startup", Phase::Startup),
    ("on startup", Phase::Startup),
    ("during startup", Phase::Startup),
    ("fails to start", Phase::Startup),
    ("failed to start", Phase::Startup),
    // A server deployed is a server started (`Failure to Deploy Llama-3.2-11B-Vision … Due to
    // OOM`, `Failed to deploy Qwen3-Next-80B with LoRA`, session 50).
    ("failed to deploy", Phase::Startup),
    ("fails to deploy", Phase::Startup),
    ("failure to deploy", Phase::Startup),
    ("unable to deploy", Phase::Startup),
    ("cannot deploy", Phase::Startup),
    ("can't deploy", Phase::Startup),
    // Nothing loaded yet (`out of memory before even loading any models`).
    ("before even loading", Phase::Startup),
    ("before loading any model", Phase::Startup),
    // The same in other words (session 49: `audioLDM2 which refuses to launch`).
    ("refuses to start", Phase::Startup),
    ("refused to start", Phase::Startup),
    ("unable to start", Phase::Startup),
    ("won't start", Phase::Startup),
    ("doesn't start", Phase::Startup),
    ("does not start", Phase::Startup),
    // Xinference's own words for starting a model's worker (`xinference launch`, the web UI's
    // `launch model sd3-medium`), as its `launch_model` frame reads.
    ("launch model", Phase::Startup),
    // An app that cannot begin its work (`Sunshine can't start streaming on NVIDIA with Nvenc`).
    ("can't start", Phase::Startup),
    ("cannot start", Phase::Startup),
    // A device set up before any work: a WebGPU adapter's device requested with its limits
    // (`Find an error initializing the WebGPU device`), ffmpeg's hardware device for a decoder
    // (`Device creation failed: -12.`).
    ("initializing the webgpu device", Phase::Startup),
    ("initializing the gpu", Phase::Startup),
    ("device creation failed", Phase::Startup),
    ("fails to launch", Phase::Startup),
    ("failed to launch", Phase::Startup),
    ("fail to launch", Phase::Startup),
    ("refuses to launch", Phase::Startup),
    ("refused to launch", Phase::Startup),
    ("unable to launch", Phase::Startup),
    ("won't launch", Phase::Startup),
    ("doesn't launch", Phase::Startup),
    ("cuda graph capture", Phase::CudaGraphCapture),
    ("capturing cuda graph", Phase::CudaGraphCapture),
    ("cudagraph capture", Phase::CudaGraphCapture),
    ("capturing cudagraph", Phase::CudaGraphCapture),
    // The hyphenated and plural spellings (`during deferred CUDA-graph capture`, `CUDA graphs
    // capture`).
    ("cuda-graph capture", Phase::CudaGraphCapture),
    ("cuda graphs capture", Phase::CudaGraphCapture),
    ("cuda-graphs capture", Phase::CudaGraphCapture),
    ("capturing the cuda graph", Phase::CudaGraphCapture),
    ("capturing cuda-graph", Phase::CudaGraphCapture),
    // SGLang's own words when its capture raises (`cuda_graph_runner.py` `CudaGraphRunner.__init__`:
    // `Capture cuda graph failed: …`, `Capture CUDA graph failed`), retyped in titles.
    ("capture cuda graph", Phase::CudaGraphCapture),
    ("capture cuda-graph", Phase::CudaGraphCapture),
    ("capture cudagraph", Phase::CudaGraphCapture),
    // The conventional names of a step function written as they are in the reporter's words
    // (`OOM when jax.jit compiles the train_step function`): Flax's and the JAX examples'
    // `train_step` / `eval_step`, Lightning's `LightningModule.training_step` /
    // `validation_step` / `test_step` / `predict_step`, torchvision's references'
    // `train_one_epoch`.
    ("train_step", Phase::TrainingStep),
    ("training_step", Phase::TrainingStep),
    ("train_one_epoch", Phase::TrainingStep),
    ("train_epoch", Phase::TrainingStep),
    ("eval_step", Phase::Inference),
    ("validation_step", Phase::Inference),
    ("test_step", Phase::Inference),
    ("predict_step", Phase::Inference),
    // A request named as what failed (`LoRA request raise CUDA OutOfMemoryError when input
    // token > 8k`, `long requests fail with OOM`): a request is served by the model.
    ("request raise", Phase::Inference),
    ("request fails", Phase::Inference),
    ("request failed", Phase::Inference),
    ("requests fail", Phase::Inference),
    ("request causes", Phase::Inference),
    ("requests cause", Phase::Inference),
    ("request crashes", Phase::Inference),
    ("requests crash", Phase::Inference),
    ("request triggers", Phase::Inference),
    ("requests trigger", Phase::Inference),
    // Post-processing of a generated image (AUTOMATIC1111's and InvokeAI's `Restore faces`, GFPGAN
    // or CodeFormer run on each generated image) and a speech pipeline's speaker diarization
    // (whisperX `diarize`): models run on the outputs, part of the generation or transcription.
    ("restore face", Phase::Inference),
    // An image given as the prompt of a generation (Fooocus's `Image Prompt`, IP-Adapter's
    // image prompts in diffusers and ComfyUI).
    ("image prompt", Phase::Inference),
    ("face restoration", Phase::Inference),
    ("diarization step", Phase::Inference),
    ("during diarization", Phase::Inference),
    ("while diarizing", Phase::Inference),
    // A model exported to another format (`when exporting yolov8n to tensorrt`, `error
    // during export to ONNX`), and the export's own log lines: YOLOv5's `export.py`
    // `export_engine` (`TensorRT: building FP32 engine in yolov5s.engine`), ultralytics 8.x
    // `engine/exporter.py` (`TensorRT: building FP16 engine as yolov8n.engine`, each format's
    // `starting export with …`).
    ("when exporting", Phase::FormatConversion),
    ("while exporting", Phase::FormatConversion),
    ("during export", Phase::FormatConversion),
    ("during the export", Phase::FormatConversion),
    ("starting export with", Phase::FormatConversion),
    ("building fp32 engine", Phase::FormatConversion),
    ("building fp16 engine", Phase::FormatConversion),
    ("building int8 engine", Phase::FormatConversion),
    // Merging an adapter into the base weights (PEFT `merge_and_unload`, LLaMA-Factory's
    // export, ms-swift `export --merge_lora`) rewrites the weights: a format conversion
    // (`合并QLoRA权重报Cuda out of memory`, `OOM when merging the LoRA`).
    ("merge_and_unload", Phase::FormatConversion),
    ("merge lora", Phase::FormatConversion),
    ("merging lora", Phase::FormatConversion),
    ("merge the lora", Phase::FormatConversion),
    ("merging the lora", Phase::FormatConversion),
    ("merge the adapter", Phase::FormatConversion),
    ("merging the adapter", Phase::FormatConversion),
    ("merge adapter", Phase::FormatConversion),
    ("merging adapter", Phase::FormatConversion),
    ("合并lora", Phase::FormatConversion),
    ("合并qlora", Phase::FormatConversion),
    ("合并权重", Phase::FormatConversion),
    ("lora合并", Phase::FormatConversion),
    ("权重合并", Phase::FormatConversion),
    // Quantizing a model's weights (GPTQ's and AWQ's calibration, ExLlamaV2's `convert.py`,
    // llama.cpp's `quantize`, lit-llama's `quantize.py`) rewrites them in another format: the
    // act, not a quantized model in use (`training a quantized model`, `QLoRA` read as
    // training): `CUDA OOM when quantizing Llama-3-8B`, `OOM on VRAM during quantization`,
    // `I am unable to quantize the new model`, 量化时显存不足.
    ("when quantizing", Phase::FormatConversion),
    ("while quantizing", Phase::FormatConversion),
    ("during quantizing", Phase::FormatConversion),
    ("during quantization", Phase::FormatConversion),
    ("during the quantization", Phase::FormatConversion),
    ("quantization process", Phase::FormatConversion),
    ("quantizing the model", Phase::FormatConversion),
    ("quantizing a model", Phase::FormatConversion),
    ("quantizing my model", Phase::FormatConversion),
    ("trying to quantize", Phase::FormatConversion),
    ("try to quantize", Phase::FormatConversion),
    ("tried to quantize", Phase::FormatConversion),
    ("unable to quantize", Phase::FormatConversion),
    ("quantize with", Phase::FormatConversion),
    // How far a quantization had got (`CUDA out of memory at quantize layer 18`), and a
    // title's conversion named before the failure (`tiny_llama convert OOM issue`).
    // An evaluation named in a code-mixed Chinese sentence (`eval过程会oom`, it OOMs in the
    // eval process; `进入eval阶段就报OOM`, on entering the eval stage; `在val的时候OOM了`, at
    // validation time), and a validation said to fail (`Validation fails with a CUDA out of
    // memory error`).
    ("eval过程", Phase::Inference),
    ("eval阶段", Phase::Inference),
    ("eval的时候", Phase::Inference),
    ("val的时候", Phase::Inference),
    ("validation fails", Phase::Inference),
    ("validation failed", Phase::Inference),
    ("evaluation fails", Phase::Inference),
    ("evaluation failed", Phase::Inference),
    // A loader node named with the failure (`Quadruple Clip Loader OOM`, ComfyUI's loaders).
    ("loader oom", Phase::WeightsLoad),
    // GRPO (DeepSeekMath, Shao et al. 2024; TRL's `GRPOTrainer`) is a training method: `CUDA
    // OUT OF MEMORY … WHEN GRPO`, the failure right before it (not `from the time when GRPO was
    // not compatible with …`).
    ("memory when grpo", Phase::TrainingStep),
    ("oom when grpo", Phase::TrainingStep),
    ("during grpo", Phase::TrainingStep),
    // A quantizer's calibration (GPTQ's, AWQ's and SmoothQuant's forwards over sample data to
    // fit the scales: lmdeploy `lite auto_awq`, llm-compressor's calibration pipelines) and its
    // packing of the quantized weights (AutoGPTQ / GPTQModel `pack_model`: `oom-kill when
    // packing model.layers`): steps of the conversion.
    ("during calibration", Phase::FormatConversion),
    ("during the calibration", Phase::FormatConversion),
    ("when calibrating", Phase::FormatConversion),
    ("while calibrating", Phase::FormatConversion),
    ("calibration process", Phase::FormatConversion),
    ("when packing", Phase::FormatConversion),
    ("while packing", Phase::FormatConversion),
    ("during packing", Phase::FormatConversion),
    ("packing the model", Phase::FormatConversion),
    ("packing model", Phase::FormatConversion),
    ("quantize layer", Phase::FormatConversion),
    ("quantizing layer", Phase::FormatConversion),
    ("convert oom", Phase::FormatConversion),
    ("conversion oom", Phase::FormatConversion),
    ("量化时", Phase::FormatConversion),
    ("量化过程", Phase::FormatConversion),
    ("量化模型时", Phase::FormatConversion),
    // A checkpoint converted to another format (`OOM while trying to convert a 70B model to
    // 4.75 bits`, `when converting the checkpoint to GGUF`).
    ("trying to convert", Phase::FormatConversion),
    ("when converting", Phase::FormatConversion),
    ("while converting", Phase::FormatConversion),
    ("during conversion", Phase::FormatConversion),
    ("during the conversion", Phase::FormatConversion),
    // The conversion named as a noun (`Model conversion from HF to GGUF crashes`), and the
    // repacking of quantized weights an engine runs after reading them (vLLM's Marlin kernels'
    // `process_weights_after_loading`: `Marlin repack fails`, `fails during Marlin WNA16
    // post-load processing`).
    ("model conversion", Phase::FormatConversion),
    ("checkpoint conversion", Phase::FormatConversion),
    ("weight conversion", Phase::FormatConversion),
    ("weights conversion", Phase::FormatConversion),
    ("conversion to gguf", Phase::FormatConversion),
    ("post-load processing", Phase::FormatConversion),
    ("repack fails", Phase::FormatConversion),
    ("repack failed", Phase::FormatConversion),
    // The KV cache being made or mapped back (vLLM's `initialize_kv_cache`, SGLang's
    // `init_memory_pool`, torch_memory_saver's `resume` of a paused pool in RL frameworks):
    // `The error occurs during KV cache initialization`, `OOM when resume the KV cache`.
    ("kv cache initialization", Phase::KvCacheAlloc),
    ("kv cache initialisation", Phase::KvCacheAlloc),
    ("kv cache allocation", Phase::KvCacheAlloc),
    ("kv-cache initialization", Phase::KvCacheAlloc),
    ("kv-cache allocation", Phase::KvCacheAlloc),
    ("allocating the kv cache", Phase::KvCacheAlloc),
    ("allocating kv cache", Phase::KvCacheAlloc),
    ("initializing the kv cache", Phase::KvCacheAlloc),
    ("initializing kv cache", Phase::KvCacheAlloc),
    ("initialising the kv cache", Phase::KvCacheAlloc),
    ("creating the kv cache", Phase::KvCacheAlloc),
    ("kv cache creation", Phase::KvCacheAlloc),
    ("resume the kv cache", Phase::KvCacheAlloc),
    ("resume kv cache", Phase::KvCacheAlloc),
    ("resuming the kv cache", Phase::KvCacheAlloc),
    ("resuming kv cache", Phase::KvCacheAlloc),
    // A hybrid model's recurrent-state pool, made beside the KV cache (SGLang's and vLLM's Mamba
    // cache: `OOM on Mamba state cache allocation`).
    ("state cache allocation", Phase::KvCacheAlloc),
    ("mamba pool", Phase::KvCacheAlloc),
    ("mamba cache allocation", Phase::KvCacheAlloc),
    // The weights' load named as a noun (`OOM-killed during weight load`).
    ("during weight load", Phase::WeightsLoad),
    ("during weights load", Phase::WeightsLoad),
    ("during the weight load", Phase::WeightsLoad),
    // A request through a server's API is served by the model (`an out of memory error when
    // attempting to run from the API`, `OOM on API requests`).
    ("from the api", Phase::Inference),
    ("via the api", Phase::Inference),
    ("through the api", Phase::Inference),
    ("api request", Phase::Inference),
    // Building the model places its weights on the device (`the model is initialised with
    // every request`, `OOM when initializing the model`).
    ("model is initialised", Phase::WeightsLoad),
    ("model is initialized", Phase::WeightsLoad),
    ("initializing the model", Phase::WeightsLoad),
    ("initialising the model", Phase::WeightsLoad),
    ("initialize the model", Phase::WeightsLoad),
    ("initialise the model", Phase::WeightsLoad),
    ("model initialization", Phase::WeightsLoad),
    ("model initialisation", Phase::WeightsLoad),
    // An engine or a training wrapper set up around the model (`during Deepspeed
    // initialization`, `during engine initialization`): start-up, before any step or request.
    ("during deepspeed initialization", Phase::Startup),
    ("during engine initialization", Phase::Startup),
    ("during the engine initialization", Phase::Startup),
    ("生成图", Phase::Inference),
    ("推論", Phase::Inference),
    ("추론", Phase::Inference),
    // Sentences embedded (`임베딩을 시도하면`, when embedding is tried; `임베딩 중`, while
    // embedding), as `embedding` is read in English; not the model's name (`임베딩 모델`).
    ("임베딩을", Phase::Inference),
    ("임베딩 중", Phase::Inference),
    ("임베딩할", Phase::Inference),
    ("임베딩하", Phase::Inference),
    ("durante la inferencia", Phase::Inference),
    ("durante a inferência", Phase::Inference),
    // More of the stage words ML users write in Chinese, Japanese, Korean, Russian, Spanish and
    // Portuguese (`推理时`, `生成中`, `при обучении`, `cargando el modelo`).
    ("生成图片", Phase::Inference),
    ("生成图像", Phase::Inference),
    ("生成视频", Phase::Inference),
    ("生成时", Phase::Inference),
    ("生成的时候", Phase::Inference),
    ("测试时", Phase::Inference),
    ("验证时", Phase::Inference),
    ("载入模型", Phase::WeightsLoad),
    ("加载权重", Phase::WeightsLoad),
    ("生成中", Phase::Inference),
    ("生成時", Phase::Inference),
    ("画像生成", Phase::Inference),
    ("ファインチューニング", Phase::TrainingStep),
    ("微調整", Phase::TrainingStep),
    ("モデルのロード", Phase::WeightsLoad),
    ("ロード中", Phase::WeightsLoad),
    ("훈련", Phase::TrainingStep),
    ("파인튜닝", Phase::TrainingStep),
    ("생성 중", Phase::Inference),
    ("생성할 때", Phase::Inference),
    ("이미지 생성", Phase::Inference),
    ("모델 로딩", Phase::WeightsLoad),
    ("при обучении", Phase::TrainingStep),
    ("во время обучения", Phase::TrainingStep),
    ("в процессе обучения", Phase::TrainingStep),
    ("при дообучении", Phase::TrainingStep),
    ("при тренировке", Phase::TrainingStep),
    ("при инференсе", Phase::Inference),
    ("при генерации", Phase::Inference),
    ("во время генерации", Phase::Inference),
    ("при загрузке модели", Phase::WeightsLoad),
    ("загрузка модели", Phase::WeightsLoad),
    ("entrenando", Phase::TrainingStep),
    ("cargando el modelo", Phase::WeightsLoad),
    ("al cargar el modelo", Phase::WeightsLoad),
    ("al generar", Phase::Inference),
    ("generando", Phase::Inference),
    ("treinando", Phase::TrainingStep),
    ("carregando o modelo", Phase::WeightsLoad),
    ("gerando", Phase::Inference),
    // An evaluation pass (run alone, or from inside a training loop: the inner stage decides,
    // see `INNER`) runs the model without a backward pass.
    ("during validation", Phase::Inference),
    ("in validation", Phase::Inference),
    ("of validation", Phase::Inference),
    ("validation step", Phase::Inference),
    ("validation loop", Phase::Inference),
    ("validation phase", Phase::Inference),
    ("validation epoch", Phase::Inference),
    ("during evaluation", Phase::Inference),
    ("evaluation step", Phase::Inference),
    ("evaluation loop", Phase::Inference),
    ("evaluation phase", Phase::Inference),
    ("during eval", Phase::Inference),
    ("eval step", Phase::Inference),
    ("eval loop", Phase::Inference),
    // The pass named as a stage (`OOM at eval stage`, `only with val stage`; session 45).
    ("eval stage", Phase::Inference),
    ("evaluation stage", Phase::Inference),
    ("validation stage", Phase::Inference),
    ("val stage", Phase::Inference),
    ("验证时", Phase::Inference),
    ("评估时", Phase::Inference),
    // Keras' or an app's prediction call named in words or without its parentheses (`if I
    // use the predict function from the keras model`, `when I use model.predict on large data
    // sets`, session 49).
    ("the predict function", Phase::Inference),
    ("the predict method", Phase::Inference),
    (".predict ", Phase::Inference),
    // A prediction pass (ColabFold's and AlphaFold's `predict` stage, Keras `model.predict`,
    // Lightning's `predict` loop) runs the model without a step.
    ("prediction step", Phase::Inference),
    ("predict step", Phase::Inference),
    ("doing predict", Phase::Inference),
    ("prediction stage", Phase::Inference),
    ("during prediction", Phase::Inference),
    // Korean: the model as the object of loading (`베이스 모델을 로딩하는 부분에서`, at the part
    // that loads the base model; `모델을 불러오는 중`).
    ("모델을 로딩", Phase::WeightsLoad),
    ("모델을 로드", Phase::WeightsLoad),
    ("모델을 불러오", Phase::WeightsLoad),
    ("모델 불러오", Phase::WeightsLoad),
    // … or a model named before the loan word with a word of time (`Alpaca-polyglot 로드 하는
    // 도중에`, while loading Alpaca-polyglot).
    ("로드 하는 도중", Phase::WeightsLoad),
    ("로드하는 도중", Phase::WeightsLoad),
    ("로드 하는 중", Phase::WeightsLoad),
    ("로드하는 중", Phase::WeightsLoad),
    ("로딩 중", Phase::WeightsLoad),
    ("로딩하는 도중", Phase::WeightsLoad),
    // Writing a checkpoint is no stage of the list (the corpus labels a save inside training
    // `unknown`): named inside a training sentence, it is the stage that ran.
    ("saving a checkpoint", Phase::Unknown),
    ("saving the checkpoint", Phase::Unknown),
    ("saving checkpoint", Phase::Unknown),
    ("saving the model", Phase::Unknown),
    ("saving model", Phase::Unknown),
    ("checkpoint saving", Phase::Unknown),
    ("save a checkpoint", Phase::Unknown),
    ("save the checkpoint", Phase::Unknown),
    ("save the model", Phase::Unknown),
    // … and in Chinese (session 34): the model's or weights' save, a save's step or moment
    // (`在保存的那一步出现OOM错误`, at the step of saving; `在保存模型参数的时候出现OOM错误`).
    ("保存模型", Phase::Unknown),
    ("保存权重", Phase::Unknown),
    ("保存检查点", Phase::Unknown),
    ("保存的那一步", Phase::Unknown),
    ("保存那一步", Phase::Unknown),
    ("保存的时候", Phase::Unknown),
    ("保存时", Phase::Unknown),
    // A load interrupted half way (`Ray's memory monitor kills workers mid-load`): the weights
    // were loading (session 34).
    // The load written as a compound (`the REST model-load endpoint proceeds with a load`,
    // `model-load failure`).
    ("model-load", Phase::WeightsLoad),
    ("mid-load", Phase::WeightsLoad),
    ("mid load", Phase::WeightsLoad),
];

/// Session 16: a trained model applied to the user's inputs, named by the act or the inputs
/// (tests/fixtures/corpus/AUDIT.md, "Session 16: a model applied to inputs"): inference. An app
/// or script that only applies a model has loading as its one other stage, and loading is named
/// by its own words when it failed there. Read with the sentence's guards of the grammar
/// (advice, hypotheticals, negations, a general case: `One common case is running the
/// evaluation`), and not of a host-memory failure (`host_apply_unshown`).
pub(super) const APPLY_PHRASES: &[(&str, Phase)] = &[
    // A face swapped or changed in an image (roop, FaceFusion, InstantID, ReActor).
    ("face swap", Phase::Inference),
    ("swap faces", Phase::Inference),
    ("swapping faces", Phase::Inference),
    ("change faces", Phase::Inference),
    ("changing faces", Phase::Inference),
    // AUTOMATIC1111's generation tabs (`modules/txt2img.py`, `modules/img2img.py`) used.
    ("in img2img", Phase::Inference),
    ("in txt2img", Phase::Inference),
    ("using img2img", Phase::Inference),
    ("using txt2img", Phase::Inference),
    ("with img2img", Phase::Inference),
    ("img2img generation", Phase::Inference),
    ("txt2img generation", Phase::Inference),
    // A demo or the model run on inputs, an evaluation or a test done.
    ("run the demo", Phase::Inference),
    ("running the demo", Phase::Inference),
    // A demo tested is a demo run (`when testing the demo`); `test` alone is the reporter's
    // debugging as often (session 16).
    ("testing the demo", Phase::Inference),
    ("test the demo", Phase::Inference),
    ("run demo", Phase::Inference),
    ("running demo", Phase::Inference),
    ("run the model on", Phase::Inference),
    ("running the model on", Phase::Inference),
    ("run the inference", Phase::Inference),
    ("running the inference", Phase::Inference),
    ("ran the inference", Phase::Inference),
    ("ran inference", Phase::Inference),
    ("do inference", Phase::Inference),
    ("doing inference", Phase::Inference),
    ("do the inference", Phase::Inference),
    ("did inference", Phase::Inference),
    ("did the inference", Phase::Inference),
    ("run detection", Phase::Inference),
    ("running detection", Phase::Inference),
    ("run ocr", Phase::Inference),
    ("running ocr", Phase::Inference),
    ("run segmentation", Phase::Inference),
    ("running segmentation", Phase::Inference),
    ("run transcription", Phase::Inference),
    ("running transcription", Phase::Inference),
    ("run prediction", Phase::Inference),
    ("running prediction", Phase::Inference),
    ("make predictions", Phase::Inference),
    ("making predictions", Phase::Inference),
    ("run evaluation", Phase::Inference),
    ("running evaluation", Phase::Inference),
    ("run the evaluation", Phase::Inference),
    ("running the evaluation", Phase::Inference),
    ("do the validation", Phase::Inference),
    ("do validation", Phase::Inference),
    ("doing validation", Phase::Inference),
    // A function or script named for testing a trained model, run (session 16, rule 4, in
    // words: `The error is while running the test function`).
    ("running the test function", Phase::Inference),
    ("run the test function", Phase::Inference),
    ("running the test script", Phase::Inference),
    ("run the test script", Phase::Inference),
    // The same script called code, or named eval (session 49: `I meet CUDA out of memory when
    // I run the test code`, `When I try to use the eval code`).
    ("run the test code", Phase::Inference),
    ("running the test code", Phase::Inference),
    ("run the testing code", Phase::Inference),
    ("running the testing code", Phase::Inference),
    ("the eval code", Phase::Inference),
    ("the eval script", Phase::Inference),
    ("the evaluation script", Phase::Inference),
    ("run the eval mode", Phase::Inference),
    ("do the evaluation", Phase::Inference),
    ("do evaluation", Phase::Inference),
    ("doing evaluation", Phase::Inference),
    // `when it comes to evaluation`: the evaluation pass of a training job.
    ("comes to evaluat", Phase::Inference),
    ("comes to validat", Phase::Inference),
    ("comes to inference", Phase::Inference),
    ("comes to test", Phase::Inference),
    ("during transcription", Phase::Inference),
    ("during translation", Phase::Inference),
    ("during detection", Phase::Inference),
    ("during tracking", Phase::Inference),
    ("during segmentation", Phase::Inference),
    ("during ocr", Phase::Inference),
    ("during embedding", Phase::Inference),
    ("during inpainting", Phase::Inference),
    ("during testing", Phase::Inference),
    // (`The issue comes during the testing on MSMT17`, session 47.)
    ("during the testing", Phase::Inference),
    // A pretrained encoder applied to inputs to extract their features (`during slide-level
    // feature extraction`, `During the feature extraction step`, session 47).
    ("feature extraction", Phase::Inference),
    // … or their embeddings (`I got OOM when extracting embeddings`, `no way to get embeddings
    // for sequences that use the full context`, session 48).
    ("extracting embeddings", Phase::Inference),
    ("extract embeddings", Phase::Inference),
    ("extracting the embeddings", Phase::Inference),
    ("extract the embeddings", Phase::Inference),
    ("embedding extraction", Phase::Inference),
    ("computing embeddings", Phase::Inference),
    ("compute embeddings", Phase::Inference),
    ("computing the embeddings", Phase::Inference),
    ("compute the embeddings", Phase::Inference),
    ("calculating embeddings", Phase::Inference),
    ("calculate embeddings", Phase::Inference),
    ("getting embeddings", Phase::Inference),
    ("get embeddings", Phase::Inference),
    ("getting the embeddings", Phase::Inference),
    ("get the embeddings", Phase::Inference),
    ("generating embeddings", Phase::Inference),
    ("generate embeddings", Phase::Inference),
    // … and the documents embedded, named as the verb's object (`I'm struggling to embed
    // documents`, `when it is trying to calculate the embeddings of the sentences`; session 56).
    ("calculating the embeddings", Phase::Inference),
    ("calculate the embeddings", Phase::Inference),
    ("embed documents", Phase::Inference),
    ("embedding documents", Phase::Inference),
    ("embed the documents", Phase::Inference),
    ("embedding the documents", Phase::Inference),
    ("embed my documents", Phase::Inference),
    ("embedding my documents", Phase::Inference),
    ("encode the corpus", Phase::Inference),
    ("encoding the corpus", Phase::Inference),
    // A mesh taken from a trained field or a generated asset (`when executing mesh
    // generation`, `the mesh extraction step`), and frames interpolated between a video's
    // (RIFE, FILM): the model applied to its inputs (session 56).
    ("mesh extraction", Phase::Inference),
    ("extracting the mesh", Phase::Inference),
    ("extract the mesh", Phase::Inference),
    ("extracting mesh", Phase::Inference),
    ("mesh generation", Phase::Inference),
    ("frame interpolation", Phase::Inference),
    ("interpolating frames", Phase::Inference),
    ("interpolate frames", Phase::Inference),
    ("interpolating the frames", Phase::Inference),
    ("during test", Phase::Inference),
    ("at test time", Phase::Inference),
    ("test phase", Phase::Inference),
    ("testing phase", Phase::Inference),
    ("test stage", Phase::Inference),
    ("inference phase", Phase::Inference),
    ("inference stage", Phase::Inference),
    ("inference time", Phase::Inference),
    // A diffusion model's latents decoded to pixels (a ComfyUI latent decoder node), or cached
    // before a training by a no-grad VAE pass (kohya-ss sd-scripts `cache_latents`, diffusers'
    // training examples' `--cache_latents`): the VAE applied to images.
    ("latent decod", Phase::Inference),
    ("caching latents", Phase::Inference),
    ("cache latents", Phase::Inference),
    ("caching the latents", Phase::Inference),
    ("latent cach", Phase::Inference),
    ("latents cach", Phase::Inference),
    // A request's size or the server's load, which only matter when the model is run on
    // requests: `with long inputs`, `for long context`, `on some queries`, `with high
    // concurrency`.
    ("long input", Phase::Inference),
    ("long prompt", Phase::Inference),
    ("long queries", Phase::Inference),
    ("long query", Phase::Inference),
    ("for long context", Phase::Inference),
    ("with long context", Phase::Inference),
    ("long-context request", Phase::Inference),
    ("long context request", Phase::Inference),
    ("on queries", Phase::Inference),
    ("some queries", Phase::Inference),
    ("certain queries", Phase::Inference),
    ("high concurrency", Phase::Inference),
    // Each question or prompt put to the model fails (`this happens with any question to the
    // model`): the model answering requests. (Not `every request`: a request may start an
    // instance or load a model, `the model is initialised with every request`.)
    ("any question", Phase::Inference),
    ("every question", Phase::Inference),
    ("each question", Phase::Inference),
    ("any prompt", Phase::Inference),
    ("every prompt", Phase::Inference),
    ("each prompt", Phase::Inference),
    ("during rendering", Phase::Inference),
    ("under load", Phase::Inference),
    ("under heavy load", Phase::Inference),
    ("under high load", Phase::Inference),
    ("inference load", Phase::Inference),
    ("concurrent requests", Phase::Inference),
    ("parallel requests", Phase::Inference),
    ("multiple requests", Phase::Inference),
    ("many requests", Phase::Inference),
    ("send requests", Phase::Inference),
    ("sending requests", Phase::Inference),
    ("sent a request", Phase::Inference),
    ("sent requests", Phase::Inference),
    ("super resolution", Phase::Inference),
    ("super-resolution", Phase::Inference),
    ("高并发", Phase::Inference),
    ("并发请求", Phase::Inference),
    ("超分", Phase::Inference),
    ("换脸", Phase::Inference),
    ("при распознавании", Phase::Inference),
    ("при транскрибации", Phase::Inference),
    ("при транскрипции", Phase::Inference),
    ("при переводе", Phase::Inference),
    ("при детекции", Phase::Inference),
    ("при обработке", Phase::Inference),
    ("при сегментации", Phase::Inference),
    ("при тестировании", Phase::Inference),
    ("при предсказании", Phase::Inference),
    ("во время инференса", Phase::Inference),
    ("во время распознавания", Phase::Inference),
    ("во время обработки", Phase::Inference),
    ("при использовании модели", Phase::Inference),
    ("al transcribir", Phase::Inference),
    ("transcribiendo", Phase::Inference),
    ("al traducir", Phase::Inference),
    ("traduciendo", Phase::Inference),
    ("al procesar", Phase::Inference),
    ("procesando", Phase::Inference),
    ("al detectar", Phase::Inference),
    ("al segmentar", Phase::Inference),
    ("al usar el modelo", Phase::Inference),
    ("al ejecutar el modelo", Phase::Inference),
    ("al probar el modelo", Phase::Inference),
    ("durante la transcripción", Phase::Inference),
    ("durante la traducción", Phase::Inference),
    ("ao transcrever", Phase::Inference),
    ("transcrevendo", Phase::Inference),
    ("ao traduzir", Phase::Inference),
    ("traduzindo", Phase::Inference),
    ("ao processar", Phase::Inference),
    ("processando", Phase::Inference),
    ("ao detectar", Phase::Inference),
    ("ao usar o modelo", Phase::Inference),
    ("ao executar o modelo", Phase::Inference),
    ("ao testar o modelo", Phase::Inference),
    ("durante a transcrição", Phase::Inference),
    // An input named too large for the run (`the image is too large`, `图片尺寸太大`, the image's
    // size too large): a model applied to that input, whose size decides the memory.
    ("image is too large", Phase::Inference),
    ("image is too big", Phase::Inference),
    ("images are too large", Phase::Inference),
    ("images are too big", Phase::Inference),
    ("image size is too large", Phase::Inference),
    ("image resolution is too high", Phase::Inference),
    ("prompt is too long", Phase::Inference),
    ("图片太大", Phase::Inference),
    ("图片过大", Phase::Inference),
    ("图片尺寸太大", Phase::Inference),
    ("图片尺寸过大", Phase::Inference),
    ("图片分辨率太高", Phase::Inference),
    ("图片分辨率过高", Phase::Inference),
    ("图像太大", Phase::Inference),
    ("图像尺寸太大", Phase::Inference),
    ("圖片太大", Phase::Inference),
    ("圖片過大", Phase::Inference),
    ("圖片尺寸太大", Phase::Inference),
    ("圖片尺寸過大", Phase::Inference),
    ("视频太长", Phase::Inference),
    ("视频过长", Phase::Inference),
    ("音频太长", Phase::Inference),
    ("音频过长", Phase::Inference),
    ("文本太长", Phase::Inference),
    ("文本过长", Phase::Inference),
    ("画像が大きすぎる", Phase::Inference),
    // Session 51. A training that could not be run, in the failure's place (`# Fail to train
    // Qwen-3b with long context GRPO`): the training's steps, as `trying to train` is.
    ("fail to train", Phase::TrainingStep),
    ("fails to train", Phase::TrainingStep),
    ("failed to train", Phase::TrainingStep),
    // The policy's update of an RL loop (`it runs into OOM during Megatron Actor Updating`,
    // verl's `update_actor`): its forward, backward and optimizer step.
    ("actor updat", Phase::TrainingStep),
    ("updating actor", Phase::TrainingStep),
    ("updating the actor", Phase::TrainingStep),
    // The start of an epoch (`The OOM was at the start of Epoch 1 after model was init-ed`):
    // the training's first steps of it.
    ("at the start of epoch", Phase::TrainingStep),
    ("at the beginning of epoch", Phase::TrainingStep),
    ("at the start of the epoch", Phase::TrainingStep),
    ("at the beginning of the epoch", Phase::TrainingStep),
    // A gradient step as the moment (`it can successfully run one gradient update step, while
    // returns with OOM after it`).
    ("gradient update step", Phase::TrainingStep),
    ("gradient step", Phase::TrainingStep),
    // The loading as the moment (`give me a CUDA OOM error at loading using VLLM`).
    ("error at loading", Phase::WeightsLoad),
    ("oom at loading", Phase::WeightsLoad),
    ("memory at loading", Phase::WeightsLoad),
    ("at loading time", Phase::WeightsLoad),
    ("at load time", Phase::WeightsLoad),
    // The moment named by its noun (`OOM at the time of evaluation`).
    ("at the time of evaluation", Phase::Inference),
    ("at the time of inference", Phase::Inference),
    ("at the time of prediction", Phase::Inference),
    ("at the time of testing", Phase::Inference),
    ("at the time of training", Phase::TrainingStep),
    ("at the time of loading", Phase::WeightsLoad),
    // A validation reached and failed in (`It all goes smoothly until validation, where
    // there's a huge memory usage spike`).
    // … or begun, the training's epoch over (`when the first Epoch training is finished and
    // validation starts, the progress bar starts to report an error`; session 56).
    ("validation starts", Phase::Inference),
    ("validation begins", Phase::Inference),
    ("validation started", Phase::Inference),
    ("evaluation starts", Phase::Inference),
    ("evaluation begins", Phase::Inference),
    ("evaluation started", Phase::Inference),
    ("until validation", Phase::Inference),
    ("until the validation", Phase::Inference),
    ("until evaluation", Phase::Inference),
    ("until the evaluation", Phase::Inference),
    // A server not yet up (`OOM occurs before the server is successfully started`): its
    // start.
    ("before the server is", Phase::Startup),
    ("before the server started", Phase::Startup),
    ("before the server starts", Phase::Startup),
    // Images or video made from a prompt (`does not have enough vram to create images above
    // 600x600pix`, `when i try to use text to video`): generation.
    ("create images", Phase::Inference),
    ("create an image", Phase::Inference),
    ("creating images", Phase::Inference),
    ("creating an image", Phase::Inference),
    ("make images", Phase::Inference),
    ("make an image", Phase::Inference),
    ("making images", Phase::Inference),
    ("text to video", Phase::Inference),
    ("text-to-video", Phase::Inference),
    ("image to video", Phase::Inference),
    ("image-to-video", Phase::Inference),
    // An image given to a multimodal model (`When running gemma 3 with image inputs … the model
    // crashes`, `Only runs into the issue with image input`): a request at work.
    ("with image input", Phase::Inference),
    ("with an image input", Phase::Inference),
    ("when giving it image", Phase::Inference),
    ("when giving it an image", Phase::Inference),
    // A training run again on other data (`getting an OOM immediately while trying to retrain a
    // dataset`), and a quantization in the reporter's words (`when I quantize model to be dtype
    // of INT 8 I encountered OOM`).
    ("trying to retrain", Phase::TrainingStep),
    ("when retraining", Phase::TrainingStep),
    ("while retraining", Phase::TrainingStep),
    ("when i quantize", Phase::FormatConversion),
    ("when i try to quantize", Phase::FormatConversion),
    // Session 52: a model built by its class (`out-of-memory issues when instantiating
    // TimeMoeForPrediction`) or an RL job's reference model set up (`getting "OOM" when
    // Initializing Ref Model (Actor Model initialized perfectly)`) → the weights placed; a
    // VAE's pass of a generation (`Happens for example during VAE encode`) and a validation run
    // (`Conv2conv out of memory at validation time`) → inference.
    ("when instantiating", Phase::WeightsLoad),
    ("while instantiating", Phase::WeightsLoad),
    ("instantiating the model", Phase::WeightsLoad),
    ("initializing ref model", Phase::WeightsLoad),
    ("initializing the ref model", Phase::WeightsLoad),
    ("initializing the reference model", Phase::WeightsLoad),
    ("during vae encode", Phase::Inference),
    ("during vae decode", Phase::Inference),
    ("at validation time", Phase::Inference),
    // Session 53: the validation or evaluation pass named with `at` (`OOM at validation for
    // unetr`, `there is always OOM error at the first validation`).
    ("at validation", Phase::Inference),
    ("at the validation", Phase::Inference),
    ("at first validation", Phase::Inference),
    ("at the first validation", Phase::Inference),
    ("at evaluation", Phase::Inference),
    ("at the evaluation", Phase::Inference),
    ("at the first evaluation", Phase::Inference),
];
