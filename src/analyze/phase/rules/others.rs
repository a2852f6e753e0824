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
    // --- An optimizer making its slot variables (the moments of Adam) at the first update:
    // part of the training step, and it encloses the variable creation below. Keras 2
    // `optimizers/optimizer_v2/optimizer_v2.py` `_create_all_weights` → `_create_slots` →
    // `add_slot`; Keras 2.11+ `optimizers/optimizer.py` and Keras 3 `src/optimizers/
    // base_optimizer.py` `build` → `add_variable_from_reference`. ---
    r("_create_all_weights", "optimizer", T, Stage, "keras"),
    r("_create_slots", "optimizer", T, Stage, "keras"),
    r("add_slot", "optimizer", T, Stage, "keras"),
    r(
        "add_variable_from_reference",
        "optimizer",
        T,
        Stage,
        "keras",
    ),
    // --- TensorFlow creating a variable (TF 1.15–2.x `python/ops/variables.py`
    // `VariableMetaclass._variable_v1_call` / `_variable_v2_call`, which call
    // `variable_scope.py` `default_variable_creator` / `default_variable_creator_v2`, which
    // build a `ResourceVariable` whose initial value is computed on the device in eager
    // mode: `[Op:Add]` of a random initializer). A model's weights being built, unless an
    // optimizer's slot creation (above) or another stage encloses it. ---
    r(
        "_variable_v1_call",
        "tensorflow/python/ops/",
        W,
        Serve,
        "tensorflow",
    ),
    r(
        "_variable_v2_call",
        "tensorflow/python/ops/",
        W,
        Serve,
        "tensorflow",
    ),
    r(
        "default_variable_creator",
        "tensorflow/python/ops/",
        W,
        Serve,
        "tensorflow",
    ),
    r(
        "default_variable_creator_v2",
        "tensorflow/python/ops/",
        W,
        Serve,
        "tensorflow",
    ),
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
    // --- spaCy: `Language.update` runs a training update (forward, backward, the optimizer)
    // over a batch (spaCy v2 `spacy/language.py`, spacy-pytorch-transformers'
    // `spacy_pytorch_transformers/language.py` `PyTT_Language.update`); v3's training loop is
    // `spacy/training/loop.py` `train_while_improving` ---
    r("update", "spacy/language.py", T, Serve, "spacy"),
    r(
        "update",
        "spacy_pytorch_transformers/language.py",
        T,
        Serve,
        "spacy",
    ),
    r(
        "train_while_improving",
        "spacy/training/loop.py",
        T,
        Serve,
        "spacy",
    ),
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
    // --- Protein structure prediction. AlphaFold 2.x `run_alphafold.py` `predict_structure`
    // (after the MSA and template search, each model's `model_runner.process_features` then
    // `predict`: `alphafold/model/model.py` `RunModel.predict`, the jitted forward), the same
    // function in ColabFold's `colabfold/batch.py` and its notebooks, and AlphaFold 3
    // `run_alphafold.py` `predict_structure` (→ `ModelRunner.run_inference`, a rule of its own
    // name for any program); the parameters read by `alphafold/model/data.py`
    // `get_model_haiku_params` (session 52). ---
    r("predict_structure", "", I, Serve, "alphafold"),
    r("predict", "alphafold/model/model.py", I, Serve, "alphafold"),
    r(
        "get_model_haiku_params",
        "alphafold/model/data.py",
        W,
        Stage,
        "alphafold",
    ),
];

/// A segment of the frame table (its place in the order: `rules.rs` `SEGMENTS`).
pub(super) const XGBOOST: &[FrameRule] = &[
    // --- XGBoost (dmlc/xgboost 1.x–3.x): the C API's exported functions as dmlc-core's stack
    // trace names them (`[bt] (5) …/libxgboost.so(XGBoosterUpdateOneIter+0x70)`,
    // `src/c_api/c_api.cc`): `XGBoosterUpdateOneIter` runs one boosting round
    // (`Learner::UpdateOneIter`), `XGBoosterBoostOneIter` / `XGBoosterTrainOneIter` (2.0+) one
    // round with a custom objective's gradients; `XGBoosterPredict*` (`PredictFromDMatrix`,
    // `PredictFromDense`, `PredictFromCudaArray`, …) predict with the trained trees. The
    // Python package's `core.py` `Booster.update` / `Booster.boost` call the first, and
    // `Booster.predict` / `Booster.inplace_predict` the last. ---
    r("XGBoosterUpdateOneIter", "libxgboost", T, Serve, "xgboost"),
    r("XGBoosterBoostOneIter", "libxgboost", T, Serve, "xgboost"),
    r("XGBoosterTrainOneIter", "libxgboost", T, Serve, "xgboost"),
    r("XGBoosterPredict", "libxgboost", I, Serve, "xgboost"),
    r(
        "XGBoosterPredictFromDMatrix",
        "libxgboost",
        I,
        Serve,
        "xgboost",
    ),
    r(
        "XGBoosterPredictFromDense",
        "libxgboost",
        I,
        Serve,
        "xgboost",
    ),
    r(
        "XGBoosterPredictFromColumnar",
        "libxgboost",
        I,
        Serve,
        "xgboost",
    ),
    r("XGBoosterPredictFromCSR", "libxgboost", I, Serve, "xgboost"),
    r(
        "XGBoosterPredictFromCudaArray",
        "libxgboost",
        I,
        Serve,
        "xgboost",
    ),
    r(
        "XGBoosterPredictFromCudaColumnar",
        "libxgboost",
        I,
        Serve,
        "xgboost",
    ),
    r("update", "xgboost/core.py", T, Serve, "xgboost"),
    r("boost", "xgboost/core.py", T, Serve, "xgboost"),
    r("predict", "xgboost/core.py", I, Serve, "xgboost"),
    r("inplace_predict", "xgboost/core.py", I, Serve, "xgboost"),
];
