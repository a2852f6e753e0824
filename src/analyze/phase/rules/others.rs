//! The frame rules of JAX, Flax, Keras, TensorFlow and Chainer.
//! `rules.rs` orders the segments into one table (the first rule that matches applies).

use super::r;
use crate::analyze::phase::FrameRule;
use crate::analyze::phase::Role::{Move, Serve, Stage, Wrapper};
use crate::model::explain::Phase::{
    Inference as I, Startup as S, TrainingStep as T, WeightsLoad as W,
};

/// A segment of the frame table (its place in the order: `rules.rs` `SEGMENTS`).
pub(super) const QUALIFIED_FLAX_KERAS_TF: &[FrameRule] = &[
    // --- Flax `training/train_state.py` `TrainState.apply_gradients`, `training/checkpoints.py`
    // `restore_checkpoint`, `jax_utils.py` `replicate`; orbax `checkpoint/` `restore`. ---
    r("apply_gradients", "flax/training/", T, Serve, "flax"),
    r("restore_checkpoint", "flax/training/", W, Stage, "flax"),
    r("replicate", "flax/jax_utils.py", W, Move, "flax"),
    r("restore", "orbax/checkpoint/", W, Stage, "orbax"),
    // --- Keras 2.x `engine/training.py` (`train_function`, `test_function`, `predict_function`
    // built by `make_*_function`; `train_on_batch`, `fit_generator`, …), 2.2
    // `engine/training_arrays.py` (`test_loop`, `predict_loop`), Keras 3
    // `src/backend/tensorflow/trainer.py`; `Model.load_weights` (`engine/training.py`,
    // `src/models/model.py`). ---
    r("train_function", "keras", T, Serve, "keras"),
    r("test_function", "keras", I, Serve, "keras"),
    r("predict_function", "keras", I, Serve, "keras"),
    r("train_on_batch", "keras", T, Serve, "keras"),
    r("test_on_batch", "keras", I, Serve, "keras"),
    r("predict_on_batch", "keras", I, Serve, "keras"),
    r("fit_generator", "keras", T, Serve, "keras"),
    r("evaluate_generator", "keras", I, Serve, "keras"),
    r("predict_generator", "keras", I, Serve, "keras"),
    r("test_loop", "keras", I, Serve, "keras"),
    r("predict_loop", "keras", I, Serve, "keras"),
    r("load_weights", "keras", W, Stage, "keras"),
    // --- TensorFlow Estimator (`tensorflow_estimator/python/estimator/estimator.py`, TF 1.x
    // `tensorflow/python/estimator/estimator.py`): `train` → `_train_model` →
    // `_train_with_estimator_spec`; `evaluate` → `_actual_eval`. ---
    r("_train_model", "estimator", T, Serve, "tensorflow"),
    r(
        "_train_with_estimator_spec",
        "estimator",
        T,
        Serve,
        "tensorflow",
    ),
    r("_actual_eval", "estimator", I, Serve, "tensorflow"),
];

/// A segment of the frame table (its place in the order: `rules.rs` `SEGMENTS`).
pub(super) const JAX_CHAINER: &[FrameRule] = &[
    // --- JAX: backend (client, stream executors) creation at the first device use
    // (jax 0.4–0.8 `jax/_src/xla_bridge.py` `backends` → `_init_backend` →
    // `make_pjrt_c_api_client`; jaxlib `xla_client.py` `make_c_api_client`) ---
    r("backends", "jax/_src/xla_bridge.py", S, Stage, "jax"),
    r("_init_backend", "jax/_src/xla_bridge.py", S, Stage, "jax"),
    r(
        "make_pjrt_c_api_client",
        "jax/_src/xla_bridge.py",
        S,
        Stage,
        "jax",
    ),
    r("make_c_api_client", "jaxlib/xla_client.py", S, Stage, "jax"),
    // --- Chainer (v5–v7): `Trainer.run` is the training loop; `StandardUpdater.update` →
    // `update_core` → `Optimizer.update(lossfun)` runs forward, backward and the update ---
    r("run", "chainer/training/trainer.py", T, Serve, "chainer"),
    r("update", "chainer/training/updaters/", T, Serve, "chainer"),
    r(
        "update_core",
        "chainer/training/updaters/",
        T,
        Serve,
        "chainer",
    ),
    r("update", "chainer/optimizer.py", T, Serve, "chainer"),
];

/// A segment of the frame table (its place in the order: `rules.rs` `SEGMENTS`).
pub(super) const KERAS_SESSION: &[FrameRule] = &[
    // --- Frames of reports outside the rule set's own corpus (issue 13's blind batch) ---
    // Keras 2 with the TF1 session (`keras/backend/tensorflow_backend.py`, and tf.keras's copy
    // `tensorflow/python/keras/backend.py`): `get_session` runs
    // `session.run(tf.variables_initializer(uninitialized_vars))` the first time a model is
    // used, which allocates the model's variables on the GPU; a step's own work runs later, in
    // `Function.__call__`'s `session.run(fetches, …)`.
    r("get_session", "keras/backend", W, Stage, "keras"),
];

/// A segment of the frame table (its place in the order: `rules.rs` `SEGMENTS`).
pub(super) const FLAX_LINEN: &[FrameRule] = &[
    // --- Flax linen (0.6–0.10 `flax/linen/module.py` `Module.init` → `init_with_output`):
    // creating the model's parameters on the device, before any step; `apply` runs them. ---
    r("init", "flax/linen/module.py", W, Stage, "flax"),
    r("init_with_output", "flax/linen/module.py", W, Stage, "flax"),
];

/// A segment of the frame table (its place in the order: `rules.rs` `SEGMENTS`).
pub(super) const AI_MODELS: &[FrameRule] = &[
    // --- ECMWF ai-models 0.x: `ai_models/__main__.py` `run` calls the plugin's `Model.run`
    // (`ai_models_graphcast/model.py`, `ai_models_panguweather/model.py`,
    // `ai_models_fourcastnet/model.py`, …), which builds the model (`load_model`: the weights,
    // a deeper rule), prepares the input fields, then runs the forecast rollout (`output =
    // self.model(…)`, a jitted apply or an ONNX session's run) and saves it: what no deeper
    // frame shows is the forecast. ---
    r("run", "ai_models_", I, Wrapper, "ai-models"),
];
