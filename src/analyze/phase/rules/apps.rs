//! The frame rules of apps read in the thirteenth session: PaddleOCR and PaddleX (Paddle
//! Inference predictors), kohya-ss sd-scripts' caching passes, and the 3D Gaussian Splatting
//! code base (and the many projects built on its layout); LangChain's chains, GPyTorch's and
//! BoTorch's predictions (session 23).
//! `rules.rs` orders the segments into one table (the first rule that matches applies).

use super::r;
use crate::analyze::phase::FrameRule;
use crate::analyze::phase::Role::{Serve, Stage, Wrapper};
use crate::model::explain::Phase::{Inference as I, TrainingStep as T, WeightsLoad as W};

/// A segment of the frame table (its place in the order: `rules.rs` `SEGMENTS`).
pub(super) const QUALIFIED_APPS: &[FrameRule] = &[
    // --- mmgp (deepbeepmeep/mmgp `offload.py`, under Wan2GP and the apps on it): `_pin_to_memory`
    // copies a model's weights into pinned ("reserved") host RAM as the model is loaded
    // (`Pinning data of 'transformer' to reserved RAM`). ---
    r("_pin_to_memory", "mmgp/offload.py", W, Stage, "mmgp"),
    // --- RL trainers that park their rollout engines between steps (Open-Reasoner-Zero
    // `orz/ppo/trainer.py` `_backload_vllm_engines` → the Ray actor's `backload_to_gpu`;
    // OpenRLHF, SkyRL: `backload_to_gpu` reloads the weights (and optimizer states) onto the
    // GPU, vLLM's `wake_up` or the strategy's `load_*_to_gpu`): the weights placed back on the
    // device, not a step. ---
    r("_backload_vllm_engines", "", W, Stage, "openrlhf"),
    r("backload_to_gpu", "", W, Stage, "openrlhf"),
    // --- Colossal-AI 0.3.x `colossalai/lazy/lazy_init.py`: `LazyTensor._materialize_data` runs
    // a lazily-initialised parameter's deferred constructors (`init_val = func(*args, **kwargs)`)
    // when the model is materialised on its device, before any step. ---
    r(
        "_materialize_data",
        "colossalai/lazy/",
        W,
        Stage,
        "colossalai",
    ),
    r("materialize", "colossalai/lazy/", W, Stage, "colossalai"),
    // --- SAM 2 (facebookresearch/sam2, 2024–2025): `sam2/sam2_video_predictor.py`
    // `SAM2VideoPredictor.init_state` reads the input video's frames onto the device
    // (`sam2/utils/misc.py` `load_video_frames`, `image.cuda()` unless `offload_video_to_cpu`)
    // before the first prompt: part of segmenting that video; `propagate_in_video` runs the
    // model frame by frame. ---
    r("init_state", "sam2/", I, Serve, "sam2"),
    r("load_video_frames", "sam2/", I, Serve, "sam2"),
    r("propagate_in_video", "sam2/", I, Serve, "sam2"),
    // --- PaddleOCR 2.x (PaddlePaddle/PaddleOCR, `paddleocr.py` `PaddleOCR.ocr`; the predictors
    // of `tools/infer/`: `predict_system.py` `TextSystem.__call__`, `predict_det.py`
    // `TextDetector.__call__`, `predict_rec.py` `TextRecognizer.__call__`, `predict_cls.py`
    // `TextClassifier.__call__`, each feeding a batch to `self.predictor.run()`, the Paddle
    // Inference predictor built in `utility.create_predictor` when the class is constructed).
    // The pip package ships `tools/` under `paddleocr/`. ---
    r("ocr", "paddleocr/paddleocr.py", I, Serve, "paddleocr"),
    r("__call__", "tools/infer/predict_", I, Serve, "paddleocr"),
    r(
        "create_predictor",
        "tools/infer/utility.py",
        W,
        Stage,
        "paddleocr",
    ),
    // --- PaddleX 3.x (`paddlex/inference/models/common/static_infer.py`): `StaticInfer._create`
    // builds the Paddle Inference predictor (`lazy_paddle.inference.create_predictor`: the
    // model's parameters onto the device) when a model is created; `StaticInfer.__call__` runs
    // it on a batch (`PaddleModelInfer.__call__` → `predictor.run`). ---
    r(
        "_create",
        "paddlex/inference/models/common/static_infer.py",
        W,
        Stage,
        "paddlex",
    ),
    r(
        "__call__",
        "paddlex/inference/models/common/static_infer.py",
        I,
        Serve,
        "paddlex",
    ),
    // --- LangChain (`langchain/chains/base.py` `Chain.__call__` / `Chain.invoke` /
    // `Chain.run`, 0.0.x–0.3; `langchain_core/runnables/base.py` `RunnableSequence.invoke`):
    // a chain answering its input, its model (a local LLM's generate, an embedding model's
    // forward) applied to a query. ---
    r(
        "__call__",
        "langchain/chains/base.py",
        I,
        Serve,
        "langchain",
    ),
    r("invoke", "langchain/chains/base.py", I, Serve, "langchain"),
    r("run", "langchain/chains/base.py", I, Serve, "langchain"),
    r(
        "invoke",
        "langchain_core/runnables/base.py",
        I,
        Serve,
        "langchain",
    ),
    // --- Web front ends handling a request (gradio `gradio/blocks.py` `Blocks.process_api` →
    // `call_function`, 3.x–5.x; gradio 3.x `gradio/routes.py` `run_predict`; starlette
    // `starlette/responses.py` `StreamingResponse.stream_response`, which pulls a streamed
    // answer from its generator; FastAPI `fastapi/routing.py` `run_endpoint_function`; Flask
    // `flask/app.py` `Flask.dispatch_request`): the app's model at work on a user's request,
    // unless a frame, the user's code or a log line inside names another stage (a model loaded
    // on the first click): wrappers. ---
    r("process_api", "gradio/blocks.py", I, Wrapper, "gradio"),
    r("call_function", "gradio/blocks.py", I, Wrapper, "gradio"),
    r("run_predict", "gradio/routes.py", I, Wrapper, "gradio"),
    r(
        "stream_response",
        "starlette/responses.py",
        I,
        Wrapper,
        "starlette",
    ),
    r(
        "run_endpoint_function",
        "fastapi/routing.py",
        I,
        Wrapper,
        "fastapi",
    ),
    r("dispatch_request", "flask/app.py", I, Wrapper, "flask"),
    // --- GPyTorch (`gpytorch/models/exact_prediction_strategies.py`
    // `DefaultPredictionStrategy.exact_prediction`, 1.x: the predictive mean and covariance of
    // a fitted exact GP at test points, reached from `ExactGP.__call__` in eval mode only) and
    // BoTorch (`botorch/models/gpytorch.py` `GPyTorchModel.posterior` /
    // `BatchedMultiOutputGPyTorchModel.posterior`, 0.x: the posterior at candidate points, which
    // every acquisition function evaluates): a fitted model applied to inputs. ---
    r(
        "exact_prediction",
        "gpytorch/models/exact_prediction_strategies.py",
        I,
        Serve,
        "gpytorch",
    ),
    r("posterior", "botorch/models/", I, Serve, "botorch"),
    // --- kohya-ss sd-scripts (`library/train_util.py`: `DatasetGroup.cache_latents` →
    // `BaseDataset.cache_latents` → `cache_batch_latents`, which runs `vae.encode` on the
    // training images; `cache_text_encoder_outputs` → `cache_batch_text_encoder_outputs` runs
    // the text encoders on the captions; the sd3 branch's `new_cache_latents` /
    // `new_cache_text_encoder_outputs` and `library/strategy_base.py`
    // `LatentsCachingStrategy._default_cache_batch_latents`). A caching pass before the first
    // step: the models' forward without a backward, not a training step. ---
    r(
        "cache_latents",
        "library/train_util.py",
        I,
        Serve,
        "kohya-ss",
    ),
    r(
        "new_cache_latents",
        "library/train_util.py",
        I,
        Serve,
        "kohya-ss",
    ),
    r("cache_batch_latents", "library/", I, Serve, "kohya-ss"),
    // kohya-ss musubi-tuner's caching scripts (`cache_latents.py` / `cache_text_encoder_outputs.py`
    // `encode_datasets`: the VAE or the text encoders run over the data set's batches, their
    // outputs saved for training): a caching pass, the models' forward without a backward.
    r(
        "encode_datasets",
        "cache_latents.py",
        I,
        Serve,
        "musubi-tuner",
    ),
    r(
        "encode_datasets",
        "cache_text_encoder_outputs.py",
        I,
        Serve,
        "musubi-tuner",
    ),
    r(
        "_default_cache_batch_latents",
        "library/",
        I,
        Serve,
        "kohya-ss",
    ),
    r(
        "cache_text_encoder_outputs",
        "library/train_util.py",
        I,
        Serve,
        "kohya-ss",
    ),
    r(
        "new_cache_text_encoder_outputs",
        "library/train_util.py",
        I,
        Serve,
        "kohya-ss",
    ),
    r(
        "cache_batch_text_encoder_outputs",
        "library/",
        I,
        Serve,
        "kohya-ss",
    ),
    // --- 3D Gaussian Splatting (graphdeco-inria/gaussian-splatting `scene/gaussian_model.py`,
    // kept by its derivatives: 4DGS, Scaffold-GS, …): `GaussianModel.create_from_pcd` builds
    // the Gaussians' parameters on the GPU from the SfM point cloud (`distCUDA2` on the points)
    // and `load_ply` reads trained ones, both from `Scene.__init__` before the first training
    // iteration. ---
    r(
        "create_from_pcd",
        "scene/gaussian_model.py",
        W,
        Stage,
        "3dgs",
    ),
    r("load_ply", "scene/gaussian_model.py", W, Stage, "3dgs"),
    // --- nerfstudio (`nerfstudio/engine/trainer.py`, 0.x–1.x): `Trainer.train` loops over
    // `train_iteration` ("Run one iteration with a batch of inputs": forward, losses, backward,
    // optimizer step) and, every few steps, `eval_iteration` (the pipeline's evaluation losses
    // and images: a forward without a step). `train_iteration` is also the name nerfbaselines'
    // methods give one training step (`nerfbaselines/_method_utils.py` `Method.train_iteration`),
    // so the bare name decides. ---
    r("train_iteration", "", T, Serve, "nerfstudio"),
    r("eval_iteration", "nerfstudio/", I, Serve, "nerfstudio"),
    // --- text-generation-webui (oobabooga, `modules/models.py`: `load_model` dispatches to a
    // loader, `huggingface_loader`, `llamacpp_loader`, `llamacpp_HF_loader`, `ExLlamav2_loader`,
    // `ExLlamav2_HF_loader`, `ExLlamav3_HF_loader`, `TensorRT_LLM_loader`; `modules/
    // text_generation.py` `generate_reply` → `_generate_reply` → `generate_reply_HF` /
    // `generate_reply_custom`; `modules/chat.py` `chatbot_wrapper` / `generate_chat_reply`). ---
    r(
        "huggingface_loader",
        "modules/models.py",
        W,
        Stage,
        "text-generation-webui",
    ),
    r(
        "llamacpp_loader",
        "modules/models.py",
        W,
        Stage,
        "text-generation-webui",
    ),
    r(
        "llamacpp_HF_loader",
        "modules/models.py",
        W,
        Stage,
        "text-generation-webui",
    ),
    r(
        "ExLlamav2_loader",
        "modules/models.py",
        W,
        Stage,
        "text-generation-webui",
    ),
    r(
        "ExLlamav2_HF_loader",
        "modules/models.py",
        W,
        Stage,
        "text-generation-webui",
    ),
    r(
        "ExLlamav3_HF_loader",
        "modules/models.py",
        W,
        Stage,
        "text-generation-webui",
    ),
    r(
        "TensorRT_LLM_loader",
        "modules/models.py",
        W,
        Stage,
        "text-generation-webui",
    ),
    r(
        "generate_reply",
        "modules/text_generation.py",
        I,
        Serve,
        "text-generation-webui",
    ),
    // (Its streaming generation thread: `modules/callbacks.py` `Iteratorize.gentask` runs the
    // model's `generate` with a callback per token, 2023.)
    r(
        "gentask",
        "modules/callbacks.py",
        I,
        Serve,
        "text-generation-webui",
    ),
    r(
        "_generate_reply",
        "modules/text_generation.py",
        I,
        Serve,
        "text-generation-webui",
    ),
    r(
        "generate_reply_HF",
        "modules/text_generation.py",
        I,
        Serve,
        "text-generation-webui",
    ),
    r(
        "generate_reply_custom",
        "modules/text_generation.py",
        I,
        Serve,
        "text-generation-webui",
    ),
    r(
        "chatbot_wrapper",
        "modules/chat.py",
        I,
        Serve,
        "text-generation-webui",
    ),
    r(
        "generate_chat_reply",
        "modules/chat.py",
        I,
        Serve,
        "text-generation-webui",
    ),
];
