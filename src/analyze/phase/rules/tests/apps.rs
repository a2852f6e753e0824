//! Frame rules of applications: ai-models, the web UI's memory monitor, ultralytics, the
//! thirteenth session's apps, Lightning 1.x's loops, special methods as Markdown shows them.

/// The apps' frames read this session: ai-models' forecast run, the web UI's memory monitor,
/// ultralytics' predictor set-up, warm-up and tracking.
mod app_frame_tests {
    use crate::analyze::phase::{frame_phase, frame_rule, Role};
    use crate::model::explain::Phase;

    #[test]
    fn ai_models_memory_monitor_and_ultralytics_predictor() {
        let graphcast = "/x/site-packages/ai_models_graphcast/model.py";
        assert_eq!(frame_phase("run", graphcast), Some(Phase::Inference));
        assert_eq!(
            frame_rule("run", graphcast).map(|rule| rule.role),
            Some(Role::Wrapper)
        );
        // ai-models' own entry point runs the plugin: its frame decides nothing.
        assert_eq!(
            frame_phase("run", "/x/site-packages/ai_models/__main__.py"),
            None
        );
        // The web UI's memory monitor polls `mem_get_info` in its own thread while any GPU job
        // runs (a checkpoint's load as much as a generation): its frame shows no stage
        // (session 34).
        assert_eq!(frame_phase("run", "D:\\webui\\modules\\memmon.py"), None);
        assert_eq!(
            frame_phase("sample_euler", "/content/forge/k_diffusion/sampling.py"),
            Some(Phase::Inference)
        );
        assert_eq!(
            frame_phase("launch_sampling", "/w/modules/sd_samplers_common.py"),
            Some(Phase::Inference)
        );
        assert_eq!(frame_phase("run", "/x/modules/monitor.py"), None);
        let predictor = "/x/site-packages/ultralytics/engine/predictor.py";
        assert_eq!(
            frame_phase("setup_model", predictor),
            Some(Phase::WeightsLoad)
        );
        assert_eq!(
            frame_phase("warmup", "/x/site-packages/ultralytics/nn/autobackend.py"),
            Some(Phase::Profiling)
        );
        assert_eq!(
            frame_phase("track", "/x/site-packages/ultralytics/engine/model.py"),
            Some(Phase::Inference)
        );
        assert_eq!(frame_phase("setup_model", "/x/app/setup.py"), None);
    }
}

/// The apps' frames read in the thirteenth session (`rules/apps.rs`): each fires on its
/// project's file, stays silent on the same name elsewhere, and decides over the frames around
/// it as its role says.
mod session13_app_frames {
    use crate::analyze::phase::frame_phase;
    use crate::model::explain::Phase;

    const I: Option<Phase> = Some(Phase::Inference);
    const W: Option<Phase> = Some(Phase::WeightsLoad);

    use super::super::decided;

    #[test]
    fn numbas_context_creation_is_start_up() {
        let devices = "/v/site-packages/numba_cuda/numba/cuda/cudadrv/devices.py";
        assert_eq!(
            frame_phase("get_or_create_context", devices),
            Some(crate::model::explain::Phase::Startup)
        );
        assert_eq!(
            frame_phase(
                "get_primary_context",
                "/v/site-packages/numba/cuda/cudadrv/driver.py"
            ),
            Some(crate::model::explain::Phase::Startup)
        );
    }

    #[test]
    fn sam2s_video_predictor_segments_its_input() {
        let misc = "/content/segment-anything-2-main/sam2/utils/misc.py";
        assert_eq!(frame_phase("load_video_frames", misc), I);
        assert_eq!(
            frame_phase(
                "init_state",
                "/x/site-packages/sam2/sam2_video_predictor.py"
            ),
            I
        );
        assert_eq!(frame_phase("init_state", "/x/my_app/state.py"), None);
    }

    #[test]
    fn paddle_predictors_run_and_are_built() {
        let tools = "C:\\Py\\site-packages\\paddleocr\\tools\\infer\\";
        assert_eq!(
            frame_phase("__call__", &format!("{tools}predict_det.py")),
            I
        );
        assert_eq!(
            frame_phase("__call__", &format!("{tools}predict_system.py")),
            I
        );
        assert_eq!(
            frame_phase("ocr", "/x/site-packages/paddleocr/paddleocr.py"),
            I
        );
        assert_eq!(
            frame_phase("create_predictor", "/x/PaddleOCR/tools/infer/utility.py"),
            W
        );
        let paddlex = "/x/site-packages/paddlex/inference/models/common/static_infer.py";
        assert_eq!(frame_phase("__call__", paddlex), I);
        assert_eq!(frame_phase("_create", paddlex), W);
        // The same names elsewhere decide nothing.
        assert_eq!(frame_phase("__call__", "/x/my_tools/infer.py"), None);
        assert_eq!(frame_phase("ocr", "/x/app/ocr_service.py"), None);
        assert_eq!(frame_phase("_create", "/x/app/factory.py"), None);
    }

    #[test]
    fn kohya_caching_passes_are_forwards_inside_the_training_script() {
        let util = "/x/sd-scripts/library/train_util.py";
        assert_eq!(
            decided(&[
                ("train", "/x/sd-scripts/sdxl_train.py"),
                ("cache_latents", util),
                ("cache_latents", util),
                ("cache_batch_latents", util),
                ("forward", "/x/site-packages/torch/nn/modules/conv.py"),
            ]),
            I
        );
        assert_eq!(frame_phase("cache_text_encoder_outputs", util), I);
        assert_eq!(
            frame_phase(
                "_default_cache_batch_latents",
                "/x/sd-scripts/library/strategy_base.py"
            ),
            I
        );
        assert_eq!(frame_phase("cache_latents", "/x/my_project/cache.py"), None);
    }

    #[test]
    fn nerfstudio_steps_and_text_generation_webui() {
        let trainer = "/x/site-packages/nerfstudio/engine/trainer.py";
        assert_eq!(
            decided(&[("train", trainer), ("train_iteration", trainer)]),
            Some(Phase::TrainingStep)
        );
        assert_eq!(
            decided(&[("train", trainer), ("eval_iteration", trainer)]),
            I
        );
        let models = "C:\\tgw\\modules\\models.py";
        assert_eq!(frame_phase("huggingface_loader", models), W);
        assert_eq!(frame_phase("llamacpp_HF_loader", models), W);
        assert_eq!(
            frame_phase("generate_reply_HF", "/tgw/modules/text_generation.py"),
            I
        );
        assert_eq!(frame_phase("chatbot_wrapper", "/tgw/modules/chat.py"), I);
        assert_eq!(frame_phase("eval_iteration", "/x/my/eval.py"), None);
        assert_eq!(frame_phase("huggingface_loader", "/x/app/loaders.py"), None);
        assert_eq!(frame_phase("chatbot_wrapper", "/x/bot/chat.py"), None);
    }

    #[test]
    fn turbomind_weights_and_kv_pool() {
        let tm = "/x/site-packages/lmdeploy/turbomind/turbomind.py";
        assert_eq!(frame_phase("_create_weight", tm), W);
        // The batch's creation holds the KV pool and working buffers: no one stage.
        assert_eq!(frame_phase("_create_model_instance", tm), None);
        assert_eq!(frame_phase("_create_engine", tm), None);
        assert_eq!(frame_phase("_create_weight", "/x/app/db.py"), None);
    }

    #[test]
    fn gaussian_splatting_initialisation_is_a_load_before_training() {
        assert_eq!(
            decided(&[
                ("<module>", "train.py"),
                ("training", "train.py"),
                ("__init__", "D:\\gs\\scene\\__init__.py"),
                ("create_from_pcd", "D:\\gs\\scene\\gaussian_model.py"),
            ]),
            W
        );
        assert_eq!(
            frame_phase("load_ply", "/x/4dgs/scene/gaussian_model.py"),
            W
        );
        assert_eq!(
            frame_phase("create_from_pcd", "/x/pointcloud/utils.py"),
            None
        );
    }
}

/// The frames read in session 14: Lightning 1.x's own loops and the VITS family's epoch.
mod session14_stage_frames {
    use crate::analyze::phase::{frame_phase, read_frames, Frame};
    use crate::model::explain::Phase;

    const I: Option<Phase> = Some(Phase::Inference);
    const T: Option<Phase> = Some(Phase::TrainingStep);

    fn frames(list: &[(&str, &str)]) -> Vec<Frame> {
        list.iter()
            .enumerate()
            .map(|(at, (function, file))| Frame {
                line: at as u64 + 1,
                function: function.to_string(),
                file: file.to_string(),
                called: false,
                code: None,
            })
            .collect()
    }

    #[test]
    fn lightning_1x_loops_in_its_trainer_file() {
        let trainer = "/opt/conda/lib/python3.8/site-packages/pytorch_lightning/trainer/trainer.py";
        // The sanity check runs inside `run_train`: its deeper frame decides.
        let sanity = frames(&[
            ("fit", trainer),
            ("run_train", trainer),
            ("run_sanity_check", trainer),
            ("validation_step", "/x/model.py"),
        ]);
        let decided = read_frames(&sanity).decided.map(|(_, rule)| rule.phase);
        assert_eq!(decided, I);
        let epochs = frames(&[("fit", trainer), ("run_train", trainer)]);
        let decided = read_frames(&epochs).decided.map(|(_, rule)| rule.phase);
        assert_eq!(decided, T);
        assert_eq!(frame_phase("_run_train", trainer), T);
        assert_eq!(frame_phase("_run_evaluate", trainer), I);
        assert_eq!(frame_phase("run_evaluation", trainer), I);
        assert_eq!(frame_phase("run_predict", trainer), I);
        assert_eq!(frame_phase("run_train", "/x/my_app/trainer.py"), None);
        assert_eq!(frame_phase("run_evaluation", "/x/my_app/eval.py"), None);
    }

    #[test]
    fn the_vits_epoch_trains_and_its_evaluation_is_inference() {
        let train = "C:\\vits\\train.py";
        assert_eq!(frame_phase("train_and_evaluate", train), T);
        let eval = frames(&[
            ("run", train),
            ("train_and_evaluate", train),
            ("evaluate", train),
        ]);
        assert_eq!(read_frames(&eval).decided.map(|(_, rule)| rule.phase), I);
    }
}

/// Special methods as Markdown shows them outside a code block (`in init` for `in __init__`).
mod eaten_dunders {
    use crate::analyze::phase::frame_phase;
    use crate::model::explain::Phase;

    #[test]
    fn a_constructor_or_call_whose_underscores_were_eaten_keeps_its_stage() {
        let whisper = "faster_whisper\\transcribe.py";
        assert_eq!(
            frame_phase("init", whisper),
            frame_phase("__init__", whisper)
        );
        assert_eq!(frame_phase("init", whisper), Some(Phase::WeightsLoad));
        let pipe = "/x/site-packages/diffusers/pipelines/flux/pipeline_flux.py";
        assert_eq!(frame_phase("call", pipe), Some(Phase::Inference));
        assert_eq!(
            frame_phase("enter", "/x/torch/cuda/graphs.py"),
            Some(Phase::CudaGraphCapture)
        );
        // Elsewhere `init` and `call` are ordinary names (Flax's `init` has its own rule).
        assert_eq!(frame_phase("init", "/x/my_app/model.py"), None);
        assert_eq!(frame_phase("call", "/x/keras/layers/core.py"), None);
    }
}
