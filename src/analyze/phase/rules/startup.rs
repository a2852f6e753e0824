//! The frame rules of a job's distributed and device set-up by the libraries that wrap
//! `torch.distributed.init_process_group` and `torch.cuda.set_device` (the bare torch frames are
//! in `pytorch.rs`): a failure there is start-up, before any weights or step.
//! `rules.rs` orders the segments into one table (the first rule that matches applies).

use super::r;
use crate::analyze::phase::FrameRule;
use crate::analyze::phase::Role::{Stage, Wrapper};
use crate::model::explain::Phase::Startup as S;

/// A segment of the frame table (its place in the order: `rules.rs` `SEGMENTS`).
pub(super) const DISTRIBUTED_SETUP: &[FrameRule] = &[
    // --- DeepSpeed 0.8–0.16 `deepspeed/comm/comm.py` `init_distributed` (earlier
    // `deepspeed/utils/distributed.py`), run by `deepspeed.initialize` and the launchers'
    // scripts: MPI discovery, `TorchBackend` → `init_process_group`. ---
    r("init_distributed", "deepspeed/", S, Stage, "deepspeed"),
    // --- accelerate 0.17–1.x `accelerate/state.py` `PartialState.__init__` (and
    // `AcceleratorState.__init__` around it), built by `Accelerator()`: the process group and
    // `torch.cuda.set_device`. ---
    r("__init__", "accelerate/state.py", S, Stage, "accelerate"),
    // --- Lightning: 1.2–1.5 `plugins/training_type/ddp.py` `init_ddp_connection`, 1.6–1.9
    // `utilities/distributed.py` `init_dist_connection`, 2.x `lightning/fabric/utilities/
    // distributed.py` `_init_dist_connection`, the strategies' `setup_distributed` (1.6 on,
    // `strategies/ddp.py`, `deepspeed.py`, `fsdp.py`). ---
    r("init_ddp_connection", "lightning/", S, Stage, "lightning"),
    r("init_dist_connection", "lightning/", S, Stage, "lightning"),
    r("_init_dist_connection", "lightning/", S, Stage, "lightning"),
    r("setup_distributed", "lightning/", S, Stage, "lightning"),
    // --- Lightning's set-up of a fit before its loop: 1.0–1.2 `trainer/trainer.py` `fit` →
    // `self.accelerator_backend.setup(model)` (`accelerators/gpu_accelerator.py`: the model to
    // its device, the optimizers, the precision), 1.3–1.9 `self.accelerator.setup(self, model)` /
    // `self.strategy.setup(self)` in `_run`, 2.x `lightning/pytorch/strategies/strategy.py`
    // `setup`. ---
    r("setup", "pytorch_lightning/", S, Stage, "lightning"),
    r("setup", "lightning/pytorch/", S, Stage, "lightning"),
    // --- NVIDIA apex 0.1 `apex/amp/frontend.py` `initialize` → `_initialize.py` `_initialize`
    // (casts the models, patches the optimizers, builds each loss scaler's overflow buffer on
    // the current device): the mixed-precision set-up before any step. ---
    r("initialize", "apex/amp/", S, Stage, "apex"),
    r("_initialize", "apex/amp/", S, Stage, "apex"),
    // --- fairseq 0.9–0.12 `fairseq/distributed_utils.py` (`fairseq/distributed/utils.py`)
    // `distributed_init`: `init_process_group`, then an `all_reduce` of a one-element tensor on
    // each GPU to check the group. ---
    r(
        "distributed_init",
        "fairseq/distributed",
        S,
        Stage,
        "fairseq",
    ),
    // --- torch 1.x–2.x `torch/distributed/distributed_c10d.py` `new_group` (sub-groups of
    // tensor / pipeline parallelism, created at set-up by Megatron's `initialize_model_parallel`,
    // DeepSpeed, ColossalAI). ---
    r("new_group", "torch/distributed/", S, Stage, "torch"),
];

/// A segment of the frame table (its place in the order: `rules.rs` `SEGMENTS`).
pub(super) const WORKER_BOOT: &[FrameRule] = &[
    // --- gunicorn 19–23 `gunicorn/arbiter.py` `Arbiter.spawn_worker` forks a worker and runs
    // `worker.init_process()` (logging `Exception in worker process` when it raises);
    // `gunicorn/workers/base.py` `Worker.init_process` (and uvicorn's `uvicorn/workers.py`
    // `UvicornWorker.init_process`, which calls it) sets the worker up, imports the app
    // (`load_wsgi`: a model loaded at import time loads here), then runs its loop, whose
    // requests' errors are caught and logged by the worker. Wrappers: a deeper frame (a model's
    // load) names the stage. ---
    r(
        "spawn_worker",
        "gunicorn/arbiter.py",
        S,
        Wrapper,
        "gunicorn",
    ),
    r("init_process", "gunicorn/workers/", S, Wrapper, "gunicorn"),
    r("init_process", "uvicorn/workers.py", S, Wrapper, "gunicorn"),
    r(
        "load_wsgi",
        "gunicorn/workers/base.py",
        S,
        Stage,
        "gunicorn",
    ),
    // --- RAPIDS Memory Manager 21–24 `rmm/rmm.py` `reinitialize` → `rmm/_lib/
    // memory_resource.pyx` `_initialize` (`PoolMemoryResource.__cinit__`): the device's memory
    // pool created as a process or a dask-cuda worker is set up (`LocalCUDACluster(rmm_pool_size=
    // …)`, `dask_cuda/utils.py` `RMMSetup.setup`), before any task. ---
    r("reinitialize", "rmm/rmm.py", S, Stage, "rmm"),
    r("_initialize", "rmm/_lib/memory_resource", S, Stage, "rmm"),
    // --- Taichi 0.x-1.x `taichi/lang/misc.py` `init` (`ti.init(arch=ti.gpu,
    // device_memory_GB=…)` → `materialize_runtime`): the runtime and its device memory pool
    // made before any kernel runs. ---
    r("init", "taichi/lang/misc.py", S, Stage, "taichi"),
];
