//! Frame rules of serving engines, clients and servers, and the stages read in the sixteenth
//! and seventeenth sessions (vLLM, PEFT, SD.Next, gunicorn).

/// Session 16: a serving engine's client start, SD.Next's generation passes, a web server's
/// worker boot.
mod session16_frame_tests {
    use crate::analyze::phase::{frame_phase, frame_rule, Role};
    use crate::model::explain::Phase;

    use super::super::decided_or_wrapper as decided;

    const SP: &str = "/srv/venv/lib/python3.12/site-packages/";

    #[test]
    fn vllm_v1_client_start_is_start_up_unless_a_deeper_frame_names_the_stage() {
        let client = format!("{SP}vllm/v1/engine/core_client.py");
        let llm = format!("{SP}vllm/v1/engine/async_llm.py");
        assert_eq!(
            frame_rule("make_async_mp_client", &client).map(|rule| rule.role),
            Some(Role::Wrapper)
        );
        assert_eq!(
            decided(&[
                ("__init__", &llm),
                ("make_async_mp_client", &client),
                ("__init__", &client),
            ]),
            Some(Phase::Startup)
        );
        assert_eq!(
            decided(&[
                ("make_client", &client),
                (
                    "load_model",
                    &format!("{SP}vllm/v1/worker/gpu_model_runner.py")
                ),
            ]),
            Some(Phase::WeightsLoad)
        );
        // A function of that name elsewhere is not vLLM's.
        assert_eq!(frame_phase("make_client", "/home/me/rpc/client.py"), None);
    }

    #[test]
    fn sdnext_generation_passes_are_inference() {
        let file = "/mnt/data/sdnext/modules/processing_diffusers.py";
        for function in [
            "process_diffusers",
            "process_base",
            "process_hires",
            "process_refine",
        ] {
            assert_eq!(
                frame_phase(function, file),
                Some(Phase::Inference),
                "{function}"
            );
        }
        assert_eq!(frame_phase("process_base", "/home/me/pipeline.py"), None);
        // A model load under a pass (the pipeline moved to the GPU) still decides.
        assert_eq!(
            decided(&[
                ("process_base", file),
                (
                    "load_model",
                    &format!("{SP}diffusers/pipelines/pipeline_utils.py")
                ),
            ]),
            Some(Phase::WeightsLoad)
        );
    }

    #[test]
    fn a_gunicorn_worker_boot_is_start_up() {
        let arbiter = format!("{SP}gunicorn/arbiter.py");
        let base = format!("{SP}gunicorn/workers/base.py");
        let uvicorn = format!("{SP}uvicorn/workers.py");
        assert_eq!(
            decided(&[
                ("spawn_worker", &arbiter),
                ("init_process", &uvicorn),
                ("init_process", &base),
            ]),
            Some(Phase::Startup)
        );
        assert_eq!(frame_phase("load_wsgi", &base), Some(Phase::Startup));
        // The app's model load under the import names the stage.
        assert_eq!(
            decided(&[
                ("spawn_worker", &arbiter),
                ("init_process", &base),
                ("load_wsgi", &base),
                (
                    "from_pretrained",
                    &format!("{SP}transformers/modeling_utils.py")
                ),
            ]),
            Some(Phase::WeightsLoad)
        );
        assert_eq!(frame_phase("init_process", "/home/me/pool.py"), None);
    }
}

/// The frames added in the seventeenth session (engines' and libraries' stages the open texts
/// showed without a rule).
mod session17_frame_tests {
    use crate::analyze::phase::frame_phase;
    use crate::model::explain::Phase;

    use super::super::{decided, decided_or_wrapper};

    const SP: &str = "/opt/venv/lib/python3.11/site-packages/";

    #[test]
    fn vllm_v0_sampler_serves_a_step_unless_profiling_encloses_it() {
        let sampler = format!("{SP}vllm/model_executor/layers/sampler.py");
        let metadata = format!("{SP}vllm/model_executor/sampling_metadata.py");
        let torch = format!("{SP}torch/nn/modules/module.py");
        assert_eq!(
            decided(&[
                ("_call_impl", &torch),
                ("forward", &sampler),
                ("_init_sampling_tensors", &sampler),
                ("from_sampling_metadata", &metadata),
                ("from_lists", &metadata),
            ]),
            Some(Phase::Inference)
        );
        // The profiling run samples its dummy sequences too.
        let runner = format!("{SP}vllm/worker/model_runner.py");
        assert_eq!(
            decided(&[
                ("profile_run", &runner),
                ("execute_model", &runner),
                ("forward", &sampler),
            ]),
            Some(Phase::Profiling)
        );
        // Another project's sampler module, or a `forward` elsewhere in vLLM, is not it.
        assert_eq!(frame_phase("forward", "/home/me/llm/sampler.py"), None);
        assert_eq!(frame_phase("from_lists", "/home/me/tensors.py"), None);
        assert_eq!(
            frame_phase(
                "forward",
                &format!("{SP}vllm/model_executor/layers/linear.py")
            ),
            None
        );
    }

    #[test]
    fn a_failed_execution_dump_reads_as_its_function() {
        // The frame `parse::engine_log` makes of vLLM's "Writing input of failed execution to
        // /tmp/err_execute_model_input_….pkl" line.
        let dump = "<input dump of a failed execution>";
        assert_eq!(decided(&[("execute_model", dump)]), Some(Phase::Inference));
        let runner = format!("{SP}vllm/worker/model_runner.py");
        assert_eq!(
            decided(&[("profile_run", &runner), ("execute_model", dump)]),
            Some(Phase::Profiling)
        );
    }

    #[test]
    fn peft_weighted_adapter_combination_is_a_conversion() {
        let lora = format!("{SP}peft/tuners/lora/model.py");
        assert_eq!(
            decided(&[
                ("<module>", "/work/merge.py"),
                ("add_weighted_adapter", &lora)
            ]),
            Some(Phase::FormatConversion)
        );
        assert_eq!(
            decided(&[
                ("add_weighted_adapter", &lora),
                ("_svd_generalized_task_arithmetic_weighted_adapter", &lora),
            ]),
            Some(Phase::FormatConversion)
        );
        assert_eq!(
            frame_phase(
                "add_weighted_adapter",
                &format!("{SP}peft/tuners/ia3/model.py")
            ),
            Some(Phase::FormatConversion)
        );
        // A project's own method of that name is not PEFT's.
        assert_eq!(
            frame_phase("add_weighted_adapter", "/home/me/mixer.py"),
            None
        );
    }

    #[test]
    fn vllm_v1_core_start_up_encloses_its_stages() {
        let core = format!("{SP}vllm/v1/engine/core.py");
        let utils = format!("{SP}vllm/v1/engine/utils.py");
        // Cut at the core's constructor, or the client waiting for it: start-up.
        assert_eq!(
            decided_or_wrapper(&[("run_engine_core", &core), ("__init__", &core)]),
            Some(Phase::Startup)
        );
        assert_eq!(
            decided_or_wrapper(&[
                ("launch_core_engines", &utils),
                ("wait_for_engine_startup", &utils)
            ]),
            Some(Phase::Startup)
        );
        // A deeper stage decides.
        let worker = format!("{SP}vllm/v1/worker/gpu_worker.py");
        assert_eq!(
            decided_or_wrapper(&[
                ("__init__", &core),
                ("_initialize_kv_caches", &core),
                ("determine_available_memory", &worker),
            ]),
            Some(Phase::Profiling)
        );
        assert_eq!(
            decided(&[
                ("run_busy_loop", &core),
                ("execute_model_with_error_logging", &core)
            ]),
            Some(Phase::Inference)
        );
        // Another project's constructor in a `core.py` is not vLLM's.
        assert_eq!(frame_phase("__init__", "/home/me/app/engine/core.py"), None);
        assert_eq!(
            frame_phase("wait_for_engine_startup", "/home/me/x.py"),
            None
        );
    }

    #[test]
    fn vllm_pynccl_warm_up_all_reduce_is_startup() {
        let pynccl = format!("{SP}vllm/distributed/device_communicators/pynccl.py");
        assert_eq!(
            decided(&[("__init__", &pynccl), ("all_reduce", &pynccl)]),
            Some(Phase::Startup)
        );
        // Another `__init__` of vLLM's communicators, or another project's pynccl.py, is not it.
        assert_eq!(
            frame_phase(
                "__init__",
                &format!("{SP}vllm/distributed/device_communicators/custom_all_reduce.py")
            ),
            None
        );
        assert_eq!(frame_phase("__init__", "/home/me/pynccl.py"), None);
    }
}
