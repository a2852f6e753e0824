//! Unit tests of the frame rule table (`rules.rs`): each block's rules fire on their
//! framework's file and stay silent on look-alikes elsewhere.

mod blind_batch_tests {
    use crate::analyze::phase::frame_phase;
    use crate::model::explain::Phase;

    /// The rules of the block added for reports outside the rule set's corpus.
    #[test]
    fn keras_session_init_and_torchscript_code_frames() {
        assert_eq!(
            frame_phase(
                "get_session",
                "/usr/local/lib/python3.6/dist-packages/keras/backend/tensorflow_backend.py"
            ),
            Some(Phase::WeightsLoad)
        );
        assert_eq!(
            frame_phase(
                "get_session",
                "/usr/lib/python3/site-packages/tensorflow/python/keras/backend.py"
            ),
            Some(Phase::WeightsLoad)
        );
        assert_eq!(
            frame_phase("forward", "code/__torch__/model.py"),
            Some(Phase::Inference)
        );
        // Any other module's `forward` still leaves the stage to its caller.
        assert_eq!(frame_phase("forward", "/home/me/model.py"), None);
        assert_eq!(frame_phase("get_session", "/home/me/db.py"), None);
    }
}

/// The frames of the frameworks and apps block (issue 13, second blind batch): each rule
/// fires on its framework's file and stays silent on a look-alike elsewhere.
mod framework_frame_tests {
    use crate::analyze::phase::{frame_phase, read_frames, wrapping_phrase, Frame};
    use crate::model::explain::Phase;

    const I: Option<Phase> = Some(Phase::Inference);
    const W: Option<Phase> = Some(Phase::WeightsLoad);
    const T: Option<Phase> = Some(Phase::TrainingStep);

    fn frame(line: u64, function: &str, file: &str) -> Frame {
        Frame {
            line,
            function: function.to_string(),
            file: file.to_string(),
            called: false,
            code: None,
        }
    }

    #[test]
    fn automatic1111_generation_and_its_training_tabs() {
        let root = "E:\\stable-diffusion-webui\\modules\\";
        let hijack = format!("{root}sd_hijack_optimizations.py");
        assert_eq!(frame_phase("split_cross_attention_forward", &hijack), I);
        assert_eq!(frame_phase("sub_quad_attention_forward", &hijack), I);
        let processing = "/sd/modules/processing.py";
        for function in [
            "process_images",
            "process_images_inner",
            "sample",
            "sample_hr_pass",
            "decode_latent_batch",
        ] {
            assert_eq!(frame_phase(function, processing), I, "{function}");
        }
        assert_eq!(
            frame_phase("decode_first_stage", "/sd/modules/sd_samplers_common.py"),
            I
        );
        // The same names elsewhere decide nothing.
        assert_eq!(
            frame_phase("process_images", "/home/me/tools/batch.py"),
            None
        );
        assert_eq!(
            frame_phase("split_cross_attention_forward", "/x/attention.py"),
            None
        );
        // A textual-inversion run trains through the same attention: the training tab encloses it.
        let frames = [
            frame(
                1,
                "train_embedding",
                "/sd/modules/textual_inversion/textual_inversion.py",
            ),
            frame(5, "split_cross_attention_forward", &hijack),
        ];
        let verdict = read_frames(&frames);
        let (decided, rule) = verdict.decided.expect("a rule decides");
        assert_eq!((decided.line, rule.phase), (1, Phase::TrainingStep));
        assert_eq!(verdict.enclosed.map(|f| f.line), Some(5));

        // Loading a checkpoint is a load; `--lowvram`'s hook moves parts for the forward.
        assert_eq!(
            frame_phase("reload_model_weights", "/sd/modules/sd_models.py"),
            W
        );
        assert_eq!(frame_phase("load_vae", "/sd/modules/sd_vae.py"), W);
        let frames = [
            frame(1, "txt2img", "/sd/modules/txt2img.py"),
            frame(3, "send_me_to_gpu", "/sd/modules/lowvram.py"),
            frame(5, "to", "/venv/torch/nn/modules/module.py"),
        ];
        let (decided, rule) = read_frames(&frames).decided.expect("a rule decides");
        assert_eq!((decided.line, rule.phase), (1, Phase::Inference));
    }

    #[test]
    fn speech_apps_load_then_transcribe() {
        let fw = "/venv/lib/python3.10/site-packages/faster_whisper/transcribe.py";
        assert_eq!(frame_phase("__init__", fw), W);
        assert_eq!(frame_phase("transcribe", fw), I);
        assert_eq!(frame_phase("transcribe", "/app/whisperx/asr.py"), I);
        assert_eq!(frame_phase("align", "/app/whisperx/alignment.py"), I);
        assert_eq!(
            frame_phase("load_align_model", "/app/whisperx/alignment.py"),
            W
        );
        assert_eq!(frame_phase("__call__", "/app/whisperx/diarize.py"), I);
        assert_eq!(frame_phase("__init__", "/app/whisperx/diarize.py"), W);
        assert_eq!(
            frame_phase("run", "D:\\FASTER~1\\faster_whisper_GUI\\transcribe.py"),
            I
        );
        assert_eq!(
            frame_phase("beam_search", "/espnet/espnet/nets/beam_search.py"),
            I
        );
        assert_eq!(
            frame_phase("__call__", "/espnet/espnet2/bin/asr_inference.py"),
            I
        );
        assert_eq!(
            frame_phase("train_one_epoch", "/espnet/espnet2/train/trainer.py"),
            T
        );
        // Another app's `run` or `__init__` shows nothing.
        assert_eq!(frame_phase("run", "/app/worker/transcribe.py"), None);
        assert_eq!(frame_phase("__init__", "/app/whisperx/asr.py"), None);
    }

    #[test]
    fn serving_and_generation_apps() {
        let decode = "/sglang/python/sglang/srt/disaggregation/decode.py";
        assert_eq!(frame_phase("event_loop_overlap_disagg_decode", decode), I);
        assert_eq!(
            frame_phase(
                "process_batch_result_decode",
                "/sglang/python/sglang/srt/managers/scheduler_output_processor_mixin.py"
            ),
            I
        );
        assert_eq!(
            frame_phase(
                "forward_decode_batch",
                "/sglang/python/sglang/srt/managers/router/model_rpc.py"
            ),
            I
        );
        assert_eq!(
            frame_phase(
                "encode",
                "/site-packages/sentence_transformers/SentenceTransformer.py"
            ),
            I
        );
        assert_eq!(
            frame_phase("process_diffusion", "/Fooocus/modules/default_pipeline.py"),
            I
        );
        assert_eq!(frame_phase("ksampler", "/Fooocus/modules/core.py"), I);
        assert_eq!(
            frame_phase("forward", "/gpt-oss/gpt_oss/triton/model.py"),
            I
        );
        assert_eq!(
            frame_phase("from_checkpoint", "/gpt-oss/gpt_oss/torch/model.py"),
            W
        );
        assert_eq!(frame_phase("process_batch_result", "/my/server.py"), None);
        assert_eq!(frame_phase("ksampler", "/my/sampler.py"), None);
        assert_eq!(frame_phase("encode", "/my/tokenizer.py"), None);
    }

    #[test]
    fn sharding_and_parameter_creation_are_loads() {
        let fsdp = "/site-packages/torch/distributed/fsdp/";
        assert_eq!(
            frame_phase("__init__", &format!("{fsdp}fully_sharded_data_parallel.py")),
            W
        );
        assert_eq!(
            frame_phase("_auto_wrap", &format!("{fsdp}_wrap_utils.py")),
            W
        );
        assert_eq!(frame_phase("_recursive_wrap", &format!("{fsdp}wrap.py")), W);
        assert_eq!(
            frame_phase(
                "_sync_params_and_buffers",
                "/site-packages/torch/distributed/utils.py"
            ),
            W
        );
        // DDP's constructor also builds its reducer: not a load.
        assert_eq!(
            frame_phase(
                "__init__",
                "/site-packages/torch/nn/parallel/distributed.py"
            ),
            None
        );
        assert_eq!(
            frame_phase(
                "_convert_to_zero_parameters",
                "/site-packages/deepspeed/runtime/zero/parameter_offload.py"
            ),
            W
        );
        assert_eq!(
            frame_phase(
                "_post_init_method",
                "/site-packages/deepspeed/runtime/zero/partition_parameters.py"
            ),
            W
        );
        // Gathers and partitions run in every step too.
        assert_eq!(
            frame_phase(
                "_partition_param",
                "/site-packages/deepspeed/runtime/zero/partition_parameters.py"
            ),
            None
        );
        assert_eq!(
            frame_phase("init", "/site-packages/flax/linen/module.py"),
            W
        );
        assert_eq!(
            frame_phase("apply", "/site-packages/flax/linen/module.py"),
            None
        );
        assert_eq!(frame_phase("init", "/home/me/model.py"), None);
        assert_eq!(
            frame_phase("deserialize_cuda_engine", "/app/trt_infer.py"),
            W
        );
    }

    #[test]
    fn apps_words_around_the_error() {
        let fooocus = "ERROR diffusion_model.output_blocks.1.1.transformer_blocks.4.ff.net.0.proj.\
                       weight CUDA out of memory. Tried to allocate 50.00 MiB.";
        assert_eq!(
            wrapping_phrase(fooocus).map(|(phase, _)| phase),
            Some(Phase::WeightsLoad)
        );
        let subgen = "INFO:root:Error processing or transcribing /movies/a.avi: CUDA failed with \
                      error out of memory";
        assert_eq!(
            wrapping_phrase(subgen).map(|(phase, _)| phase),
            Some(Phase::Inference)
        );
        assert_eq!(
            wrapping_phrase("ERROR: CUDA out of memory while loading diffusion_model"),
            None
        );
    }
}

/// The tenth session's framework block: each rule fires on its framework's file, stays silent
/// on a look-alike elsewhere, and a frame shared by two stages does not over-call.
mod framework_stage_tests {
    use crate::analyze::phase::{frame_phase, read_frames, Frame};
    use crate::model::explain::Phase;

    const I: Option<Phase> = Some(Phase::Inference);
    const W: Option<Phase> = Some(Phase::WeightsLoad);
    const T: Option<Phase> = Some(Phase::TrainingStep);
    const F: Option<Phase> = Some(Phase::FormatConversion);
    const S: Option<Phase> = Some(Phase::Startup);

    fn frame(line: u64, function: &str, file: &str) -> Frame {
        Frame {
            line,
            function: function.to_string(),
            file: file.to_string(),
            called: false,
            code: None,
        }
    }

    /// The phase the frames decide, read outermost first as a traceback prints them.
    fn decided(frames: &[(&str, &str)]) -> Option<Phase> {
        let frames: Vec<Frame> = frames
            .iter()
            .enumerate()
            .map(|(at, (function, file))| frame(at as u64 + 1, function, file))
            .collect();
        read_frames(&frames).decided.map(|(_, rule)| rule.phase)
    }

    const SP: &str = "/opt/conda/lib/python3.10/site-packages/";

    #[test]
    fn each_rule_fires_on_its_framework_file() {
        let cases: &[(&str, &str, Option<Phase>)] = &[
            ("run", "lightning/pytorch/loops/evaluation_loop.py", I),
            (
                "_on_evaluation_epoch_end",
                "lightning/pytorch/loops/evaluation_loop.py",
                I,
            ),
            (
                "_evaluation_step",
                "pytorch_lightning/loops/epoch/evaluation_epoch_loop.py",
                I,
            ),
            (
                "advance",
                "pytorch_lightning/loops/dataloader/evaluation_loop.py",
                I,
            ),
            (
                "_predict_step",
                "lightning/pytorch/loops/prediction_loop.py",
                I,
            ),
            ("run", "lightning/pytorch/loops/fit_loop.py", T),
            (
                "_optimizer_step",
                "lightning/pytorch/loops/optimization/automatic.py",
                T,
            ),
            ("_load_best_model", "transformers/trainer.py", W),
            ("_load_from_checkpoint", "transformers/trainer.py", W),
            ("_evaluate", "transformers/trainer.py", I),
            (
                "infer_framework_load_model",
                "transformers/pipelines/base.py",
                W,
            ),
            ("__next__", "transformers/pipelines/pt_utils.py", I),
            (
                "_generate_and_score_completions",
                "trl/trainer/grpo_trainer.py",
                T,
            ),
            (
                "_generate_and_score_completions",
                "swift/trainers/rlhf_trainer/grpo_trainer.py",
                T,
            ),
            ("generate", "trl/trainer/ppo_trainer.py", T),
            ("step", "trl/trainer/ppo_trainer.py", T),
            ("_prepare_deepspeed", "accelerate/accelerator.py", W),
            ("cpu_offload", "accelerate/big_modeling.py", W),
            ("gather_for_metrics", "accelerate/accelerator.py", I),
            ("load_peft_weights", "peft/utils/save_and_load.py", W),
            ("inject_adapter", "peft/tuners/tuners_utils.py", W),
            ("merge", "peft/tuners/lora/layer.py", F),
            ("dequantize_bnb_weight", "peft/utils/integrations.py", F),
            ("init_inference", "deepspeed/__init__.py", W),
            ("__init__", "deepspeed/inference/engine.py", W),
            ("load_checkpoint", "deepspeed/runtime/engine.py", W),
            ("train_batch", "deepspeed/runtime/pipe/engine.py", T),
            ("eval_batch", "deepspeed/runtime/pipe/engine.py", I),
            (
                "fully_shard",
                "torch/distributed/fsdp/_fully_shard/_fully_shard.py",
                W,
            ),
            (
                "fully_shard",
                "torch/distributed/_composable/fsdp/fully_shard.py",
                W,
            ),
            ("boost", "colossalai/booster/booster.py", W),
            (
                "setup_model_and_optimizer",
                "/workspace/Megatron-LM/megatron/training/training.py",
                W,
            ),
            (
                "evaluate_and_print_results",
                "/workspace/Megatron-LM/megatron/training.py",
                I,
            ),
            ("restore_from", "nemo/core/classes/modelPT.py", W),
            ("transcribe", "nemo/collections/asr/models/ctc_models.py", I),
            ("_setup_model", "recipes/lora_finetune_single_device.py", W),
            ("_do_train", "ultralytics/engine/trainer.py", T),
            ("validate", "ultralytics/engine/trainer.py", I),
            ("__call__", "ultralytics/engine/validator.py", I),
            ("__call__", "ultralytics/yolo/engine/validator.py", I),
            ("stream_inference", "ultralytics/engine/predictor.py", I),
            (
                "inference_on_dataset",
                "detectron2/evaluation/evaluator.py",
                I,
            ),
            ("_do_eval", "detectron2/engine/hooks.py", I),
            ("val", "mmengine/runner/runner.py", I),
            ("_do_evaluate", "mmcv/runner/hooks/evaluation.py", I),
            ("from_single_file", "diffusers/loaders/single_file.py", W),
            ("fuse_lora", "diffusers/loaders/lora_pipeline.py", F),
            (
                "decode",
                "diffusers/models/autoencoders/autoencoder_kl.py",
                I,
            ),
            (
                "sample_images_common",
                "/kohya_ss/sd-scripts/library/train_util.py",
                I,
            ),
            (
                "load_target_model",
                "/kohya_ss/sd-scripts/library/sdxl_train_util.py",
                W,
            ),
            ("load_checkpoint_guess_config", "/ComfyUI/comfy/sd.py", W),
            ("encode_from_tokens", "/ComfyUI/comfy/sd.py", I),
            ("upscale", "/ComfyUI/comfy_extras/nodes_upscale_model.py", I),
            ("invoke", "invokeai/app/invocations/denoise_latents.py", I),
            (
                "lock",
                "invokeai/backend/model_manager/load/model_cache/model_cache_default.py",
                W,
            ),
            ("forge_model_reload", "/forge/modules/sd_models.py", W),
            ("execute_dummy_batch", "vllm/v1/worker/gpu_worker.py", I),
            ("sample_tokens", "vllm/v1/worker/gpu_model_runner.py", I),
            (
                "init_cublas",
                "sglang/srt/model_executor/model_runner.py",
                S,
            ),
            (
                "forward_extend",
                "sglang/srt/model_executor/model_runner.py",
                I,
            ),
            ("_from_hf", "lmdeploy/turbomind/turbomind.py", W),
            ("iterate", "exllamav2/generator/dynamic.py", I),
            ("apply_gradients", "flax/training/train_state.py", T),
            ("restore", "orbax/checkpoint/checkpointer.py", W),
            ("train_function", "keras/src/engine/training.py", T),
            (
                "test_function",
                "tensorflow/python/keras/engine/training.py",
                I,
            ),
            ("predict_loop", "keras/engine/training_arrays.py", I),
            ("load_weights", "keras/engine/training.py", W),
            ("_fast_inner_training_loop", "<string>", T),
            (
                "_load_model",
                "tensorrt_llm/_torch/pyexecutor/model_engine.py",
                W,
            ),
            (
                "_create_inference_session",
                "onnxruntime/capi/onnxruntime_inference_collection.py",
                W,
            ),
            (
                "run",
                "onnxruntime/capi/onnxruntime_inference_collection.py",
                I,
            ),
            ("sample", "/sd/modules/sd_samplers_timesteps.py", I),
            ("upscale", "/sd/modules/upscaler.py", I),
            ("restore_faces", "/sd/modules/face_restoration.py", I),
            (
                "sampling_function",
                "/forge/backend/sampling/sampling_function.py",
                I,
            ),
            (
                "transcribe",
                "/Whisper-WebUI/modules/whisper/faster_whisper_inference.py",
                I,
            ),
            (
                "update_model",
                "/Whisper-WebUI/modules/whisper/faster_whisper_inference.py",
                W,
            ),
            (
                "apply",
                "pyannote/audio/pipelines/speaker_diarization.py",
                I,
            ),
            (
                "initialize_megatron",
                "/Megatron-LM/megatron/training/initialize.py",
                S,
            ),
            ("init_fn", "haiku/_src/transform.py", W),
            (
                "build_serialized_network",
                "/app/build_trt.py",
                Some(Phase::CudaGraphCapture),
            ),
            (
                "_train_with_estimator_spec",
                "tensorflow_estimator/python/estimator/estimator.py",
                T,
            ),
            (
                "_actual_eval",
                "tensorflow/python/estimator/estimator.py",
                I,
            ),
            ("load", "mlx_lm/utils.py", W),
            ("generate_step", "mlx_lm/generate.py", I),
            ("step", "mlx_lm/tuner/trainer.py", T),
            ("_gradient_accumulation", "onmt/trainer.py", T),
            ("translate", "onmt/translate/translator.py", I),
            (
                "collect_rollouts",
                "stable_baselines3/common/on_policy_algorithm.py",
                T,
            ),
            ("generate_sequences", "verl/workers/fsdp_workers.py", T),
            ("init_model", "verl/workers/fsdp_workers.py", W),
            (
                "make_experience_list",
                "openrlhf/trainer/ppo_utils/experience_maker.py",
                T,
            ),
            (
                "convert_and_save_hf",
                "/TensorRT-LLM/examples/llama/convert_checkpoint.py",
                F,
            ),
            (
                "quantize_and_export",
                "tensorrt_llm/quantization/quantize_by_modelopt.py",
                F,
            ),
            (
                "transcribe_stable",
                "stable_whisper/whisper_word_level/original_whisper.py",
                I,
            ),
            ("translate_batch", "/app/translate.py", I),
            ("validate", "/home/me/pytorch-image-models/train.py", I),
            (
                "log_validation",
                "/home/me/diffusers/examples/train_dreambooth_lora.py",
                I,
            ),
        ];
        for (function, path, phase) in cases {
            let file = if path.starts_with('/') || path.starts_with('<') {
                path.to_string()
            } else {
                format!("{SP}{path}")
            };
            assert_eq!(frame_phase(function, &file), *phase, "{function} in {file}");
        }
    }

    #[test]
    fn look_alikes_elsewhere_decide_nothing() {
        let cases: &[(&str, &str)] = &[
            ("run", "/home/me/app/loops.py"),
            ("run", "pytorch_lightning/loops/loop.py"),
            ("_generate_single_turn", "/home/me/app/server.py"),
            ("step", "/home/me/ppo/agent.py"),
            ("prepare", "/home/me/data/prepare.py"),
            ("prepare_model", "accelerate/accelerator.py"),
            ("merge", "/home/me/utils/dicts.py"),
            ("lock", "/home/me/cache.py"),
            ("invoke", "/home/me/langchain_app/chain.py"),
            ("decode", "/home/me/tokenizer.py"),
            ("to", "/home/me/pipeline_utils.py"),
            ("iterate", "/home/me/loop.py"),
            ("restore", "/home/me/backup.py"),
            ("boost", "/home/me/xgb.py"),
            ("test", "/home/me/test_model.py"),
            ("val", "/home/me/model.py"),
            ("upscale", "/home/me/esrgan.py"),
            ("train_function", "/home/me/train.py"),
            ("fully_shard", "/home/me/shard.py"),
            ("__next__", "/home/me/dataset.py"),
            ("__init__", "deepspeed/runtime/engine.py"),
            ("run", "/home/me/onnx_app/server.py"),
            ("apply", "/home/me/transforms.py"),
            ("update_model", "/home/me/app.py"),
            ("upscale", "/home/me/image_tools.py"),
            ("_load_model", "/home/me/loader.py"),
            ("load", "/home/me/mlx_app/config.py"),
            ("learn", "/home/me/agent.py"),
            ("init_model", "/home/me/model.py"),
            ("translate", "/home/me/i18n.py"),
            ("step", "mlx_lm/generate.py"),
        ];
        for (function, path) in cases {
            let file = if path.starts_with('/') {
                path.to_string()
            } else {
                format!("{SP}{path}")
            };
            assert_eq!(frame_phase(function, &file), None, "{function} in {file}");
        }
    }

    #[test]
    fn validation_inside_lightning_fit_is_inference() {
        let lp = format!("{SP}lightning/pytorch/");
        let fit = [
            ("fit", format!("{lp}trainer/trainer.py")),
            ("run", format!("{lp}loops/fit_loop.py")),
            ("advance", format!("{lp}loops/fit_loop.py")),
            ("run", format!("{lp}loops/training_epoch_loop.py")),
            (
                "on_advance_end",
                format!("{lp}loops/training_epoch_loop.py"),
            ),
            ("_decorator", format!("{lp}loops/utilities.py")),
            ("run", format!("{lp}loops/evaluation_loop.py")),
            ("on_run_end", format!("{lp}loops/evaluation_loop.py")),
            (
                "_on_evaluation_epoch_end",
                format!("{lp}loops/evaluation_loop.py"),
            ),
            (
                "_call_lightning_module_hook",
                format!("{lp}trainer/call.py"),
            ),
            ("on_validation_epoch_end", "/home/me/model.py".to_string()),
        ];
        let refs: Vec<(&str, &str)> = fit.iter().map(|(f, p)| (*f, p.as_str())).collect();
        assert_eq!(decided(&refs), I);
        // The same fit without the validation hooks is the training step.
        assert_eq!(decided(&refs[..5]), T);
        // An optimizer step of the automatic loop is training, not the enclosing epoch's eval.
        let step = [
            ("run", format!("{lp}loops/training_epoch_loop.py")),
            ("advance", format!("{lp}loops/training_epoch_loop.py")),
            ("run", format!("{lp}loops/optimization/automatic.py")),
            (
                "_optimizer_step",
                format!("{lp}loops/optimization/automatic.py"),
            ),
            ("forward", "/home/me/model.py".to_string()),
        ];
        let refs: Vec<(&str, &str)> = step.iter().map(|(f, p)| (*f, p.as_str())).collect();
        assert_eq!(decided(&refs), T);
    }

    #[test]
    fn a_rollout_is_the_training_step_but_an_eval_generate_is_inference() {
        let t = format!("{SP}transformers/");
        let grpo = [
            ("train", format!("{t}trainer.py")),
            ("_inner_training_loop", format!("{t}trainer.py")),
            ("training_step", format!("{t}trainer.py")),
            ("_prepare_inputs", format!("{SP}trl/extras/profiling.py")),
            (
                "_generate_and_score_completions",
                format!("{SP}trl/trainer/grpo_trainer.py"),
            ),
            ("generate", format!("{t}generation/utils.py")),
            ("_sample", format!("{t}generation/utils.py")),
        ];
        let refs: Vec<(&str, &str)> = grpo.iter().map(|(f, p)| (*f, p.as_str())).collect();
        assert_eq!(decided(&refs), T);
        // Without the rollout frame, a generate under training is evaluation inside training.
        let eval = [&refs[..3], &refs[5..]].concat();
        assert_eq!(decided(&eval), I);
        // A Trainer resuming loads; its evaluation during `train` is inference.
        assert_eq!(
            decided(&[
                ("train", &format!("{t}trainer.py")),
                ("_inner_training_loop", &format!("{t}trainer.py")),
                ("_load_from_checkpoint", &format!("{t}trainer.py")),
                (
                    "load_state_dict",
                    &format!("{SP}torch/nn/modules/module.py")
                ),
            ]),
            W
        );
        assert_eq!(
            decided(&[
                ("_inner_training_loop", &format!("{t}trainer.py")),
                ("_maybe_log_save_evaluate", &format!("{t}trainer.py")),
                ("_evaluate", &format!("{t}trainer.py")),
                ("evaluate", &format!("{t}trainer.py")),
                ("evaluation_loop", &format!("{t}trainer.py")),
                ("prediction_step", &format!("{t}trainer.py")),
                ("compute_loss", &format!("{t}trainer.py")),
            ]),
            I
        );
    }

    #[test]
    fn loads_inside_serving_apps_are_loads() {
        // InvokeAI: the denoise node runs, and the model cache moves the UNet to the GPU.
        let inv = format!("{SP}invokeai/");
        assert_eq!(
            decided(&[
                (
                    "invoke",
                    &format!("{inv}app/invocations/denoise_latents.py")
                ),
                (
                    "__enter__",
                    &format!("{inv}backend/model_manager/load/load_base.py")
                ),
                (
                    "lock",
                    &format!("{inv}backend/model_manager/load/model_cache/model_cache_default.py")
                ),
                ("to", &format!("{SP}torch/nn/modules/module.py")),
            ]),
            W
        );
        // Its denoise with the model already placed is inference.
        assert_eq!(
            decided(&[
                (
                    "invoke",
                    &format!("{inv}app/invocations/denoise_latents.py")
                ),
                (
                    "forward",
                    &format!("{SP}diffusers/models/unets/unet_2d_condition.py")
                ),
            ]),
            I
        );
        // ultralytics validation inside training is inference; the epoch loop itself trains.
        let u = format!("{SP}ultralytics/engine/");
        assert_eq!(
            decided(&[
                ("train", &format!("{u}trainer.py")),
                ("_do_train", &format!("{u}trainer.py")),
                ("validate", &format!("{u}trainer.py")),
                ("__call__", &format!("{u}validator.py")),
            ]),
            I
        );
        assert_eq!(
            decided(&[
                ("train", &format!("{u}trainer.py")),
                ("_do_train", &format!("{u}trainer.py")),
                ("backward", &format!("{SP}torch/_tensor.py")),
            ]),
            T
        );
    }
}

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
        assert_eq!(
            frame_phase("run", "D:\\webui\\modules\\memmon.py"),
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
    use crate::analyze::phase::{frame_phase, read_frames, Frame};
    use crate::model::explain::Phase;

    const I: Option<Phase> = Some(Phase::Inference);
    const W: Option<Phase> = Some(Phase::WeightsLoad);

    fn decided(frames: &[(&str, &str)]) -> Option<Phase> {
        let frames: Vec<Frame> = frames
            .iter()
            .enumerate()
            .map(|(at, (function, file))| Frame {
                line: at as u64 + 1,
                function: function.to_string(),
                file: file.to_string(),
                called: false,
                code: None,
            })
            .collect();
        read_frames(&frames).decided.map(|(_, rule)| rule.phase)
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

/// Conversions and quantizers run as their own job (session 15): each rule fires on its
/// library's file, encloses the calibration forward below it, and stays silent on a user's
/// function of the same name.
mod conversion_frame_tests {
    use crate::analyze::phase::{frame_phase, read_frames, Frame};
    use crate::model::explain::Phase;

    fn frame(line: u64, function: &str, file: &str) -> Frame {
        Frame {
            line,
            function: function.to_string(),
            file: file.to_string(),
            called: false,
            code: None,
        }
    }

    #[test]
    fn converters_and_quantizers_are_format_conversions() {
        let conversion = Some(Phase::FormatConversion);
        for (function, file) in [
            ("modify_tensors", "/work/llama.cpp/convert_hf_to_gguf.py"),
            ("write_tensors", "C:\\llama.cpp\\convert-hf-to-gguf.py"),
            (
                "quantize",
                "/venv/lib/python3.10/site-packages/auto_gptq/modeling/_base.py",
            ),
            (
                "fasterquant",
                "/venv/site-packages/auto_gptq/quantization/gptq.py",
            ),
            ("quantize", "/venv/site-packages/gptqmodel/models/base.py"),
            ("quantize", "/venv/site-packages/awq/models/base.py"),
            ("quantize", "/venv/site-packages/awq/quantize/quantizer.py"),
            (
                "oneshot",
                "/venv/site-packages/llmcompressor/entrypoints/oneshot.py",
            ),
            (
                "measure_quant",
                "/src/exllamav2/exllamav2/conversion/measure.py",
            ),
            (
                "merge_and_unload",
                "/venv/site-packages/peft/tuners/lora/model.py",
            ),
            (
                "_unload_and_optionally_merge",
                "/venv/site-packages/peft/tuners/tuners_utils.py",
            ),
            ("export", "/venv/site-packages/torch/onnx/utils.py"),
            ("_export", "/venv/site-packages/torch/onnx/utils.py"),
            (
                "export_pytorch",
                "/venv/site-packages/optimum/exporters/onnx/convert.py",
            ),
            (
                "convert_weight",
                "/venv/site-packages/mlc_llm/interface/convert_weight.py",
            ),
        ] {
            assert_eq!(
                frame_phase(function, file),
                conversion,
                "{function} in {file}"
            );
        }
        // The same names in the caller's code, or in a library that serves, show no conversion.
        for (function, file) in [
            ("quantize", "/home/me/project/quant.py"),
            ("export", "/home/me/project/export.py"),
            (
                "quantize",
                "/venv/site-packages/vllm/model_executor/layers/quantization/awq.py",
            ),
        ] {
            assert_ne!(
                frame_phase(function, file),
                conversion,
                "{function} in {file}"
            );
        }
    }

    #[test]
    fn a_quantizers_calibration_forward_is_the_conversion() {
        let frames = [
            frame(1, "<module>", "/home/me/quant.py"),
            frame(2, "quantize", "/venv/site-packages/awq/models/base.py"),
            frame(
                3,
                "quantize",
                "/venv/site-packages/awq/quantize/quantizer.py",
            ),
            frame(
                4,
                "forward",
                "/venv/site-packages/transformers/models/llama/modeling_llama.py",
            ),
        ];
        let verdict = read_frames(&frames);
        let (_, rule) = verdict.decided.expect("a frame decides");
        assert_eq!(rule.phase, Phase::FormatConversion);
        // A serving traceback under the caller's own `quantize` helper is not a conversion.
        let serving = [
            frame(1, "quantize", "/home/me/app.py"),
            frame(
                2,
                "generate",
                "/venv/site-packages/transformers/generation/utils.py",
            ),
        ];
        let verdict = read_frames(&serving);
        let phase = verdict.decided.map(|(_, rule)| rule.phase);
        assert_ne!(phase, Some(Phase::FormatConversion));
    }
}

/// The distributed set-up of the libraries that wrap `init_process_group` (session 15): each
/// rule fires on its library's file and stays silent on a look-alike elsewhere.
mod distributed_setup_tests {
    use crate::analyze::phase::{frame_phase, read_frames, Frame};
    use crate::model::explain::Phase;

    #[test]
    fn the_libraries_set_up_is_start_up() {
        let startup = Some(Phase::Startup);
        for (function, file) in [
            (
                "init_distributed",
                "/venv/site-packages/deepspeed/comm/comm.py",
            ),
            (
                "init_distributed",
                "/venv/site-packages/deepspeed/utils/distributed.py",
            ),
            ("__init__", "/venv/site-packages/accelerate/state.py"),
            (
                "init_ddp_connection",
                "/venv/site-packages/pytorch_lightning/plugins/training_type/ddp.py",
            ),
            (
                "init_dist_connection",
                "/venv/site-packages/pytorch_lightning/utilities/distributed.py",
            ),
            (
                "_init_dist_connection",
                "/venv/site-packages/lightning/fabric/utilities/distributed.py",
            ),
            (
                "setup_distributed",
                "/venv/site-packages/lightning/pytorch/strategies/ddp.py",
            ),
            (
                "new_group",
                "/venv/site-packages/torch/distributed/distributed_c10d.py",
            ),
        ] {
            assert_eq!(frame_phase(function, file), startup, "{function} in {file}");
        }
        for (function, file) in [
            ("init_distributed", "/home/me/train.py"),
            ("__init__", "/venv/site-packages/accelerate/accelerator.py"),
            ("setup_distributed", "/home/me/lightning_helpers.py"),
            ("new_group", "/home/me/groups.py"),
        ] {
            assert_ne!(frame_phase(function, file), startup, "{function} in {file}");
        }
    }

    #[test]
    fn a_set_up_inside_fit_is_start_up_and_a_step_after_it_is_not() {
        let frame = |line: u64, function: &str, file: &str| Frame {
            line,
            function: function.to_string(),
            file: file.to_string(),
            called: false,
            code: None,
        };
        let setup = [
            frame(
                1,
                "fit",
                "/venv/site-packages/pytorch_lightning/trainer/trainer.py",
            ),
            frame(
                2,
                "setup_environment",
                "/venv/site-packages/pytorch_lightning/strategies/ddp.py",
            ),
            frame(
                3,
                "setup_distributed",
                "/venv/site-packages/pytorch_lightning/strategies/ddp.py",
            ),
        ];
        let decided = read_frames(&setup).decided.map(|(_, rule)| rule.phase);
        assert_eq!(decided, Some(Phase::Startup));
        let step = [
            frame(
                1,
                "fit",
                "/venv/site-packages/pytorch_lightning/trainer/trainer.py",
            ),
            frame(2, "training_step", "/home/me/model.py"),
        ];
        let decided = read_frames(&step).decided.map(|(_, rule)| rule.phase);
        assert_ne!(decided, Some(Phase::Startup));
    }
}

/// Batch-size probes (session 15): the trial steps of ultralytics' AutoBatch and Lightning's
/// batch-size finder are profiling, and their names elsewhere show nothing.
mod batch_size_probe_tests {
    use crate::analyze::phase::{frame_phase, read_frames, Frame};
    use crate::model::explain::Phase;

    #[test]
    fn autobatch_and_the_batch_size_finder_are_profiling() {
        let profiling = Some(Phase::Profiling);
        for (function, file) in [
            (
                "check_train_batch_size",
                "/venv/site-packages/ultralytics/utils/autobatch.py",
            ),
            (
                "autobatch",
                "/venv/site-packages/ultralytics/utils/autobatch.py",
            ),
            ("autobatch", "/content/yolov5/utils/autobatch.py"),
            (
                "_run_power_scaling",
                "/venv/site-packages/lightning/pytorch/tuner/batch_size_scaling.py",
            ),
            (
                "scale_batch_size",
                "/venv/site-packages/pytorch_lightning/tuner/batch_size_scaling.py",
            ),
        ] {
            assert_eq!(
                frame_phase(function, file),
                profiling,
                "{function} in {file}"
            );
        }
        for (function, file) in [
            ("autobatch", "/home/me/utils.py"),
            ("_run_power_scaling", "/home/me/tuner.py"),
        ] {
            assert_ne!(
                frame_phase(function, file),
                profiling,
                "{function} in {file}"
            );
        }
        let frame = |line: u64, function: &str, file: &str| Frame {
            line,
            function: function.to_string(),
            file: file.to_string(),
            called: false,
            code: None,
        };
        // The finder's trial fit runs the training step: the probe encloses it.
        let trial = [
            frame(
                1,
                "fit",
                "/venv/site-packages/lightning/pytorch/trainer/trainer.py",
            ),
            frame(
                2,
                "_run_power_scaling",
                "/venv/site-packages/lightning/pytorch/tuner/batch_size_scaling.py",
            ),
            frame(
                3,
                "_try_loop_run",
                "/venv/site-packages/lightning/pytorch/tuner/batch_size_scaling.py",
            ),
            frame(4, "training_step", "/home/me/model.py"),
        ];
        let decided = read_frames(&trial).decided.map(|(_, rule)| rule.phase);
        assert_eq!(decided, Some(Phase::Profiling));
    }
}

/// Session 16: a serving engine's client start, SD.Next's generation passes, a web server's
/// worker boot.
mod session16_frame_tests {
    use crate::analyze::phase::{frame_phase, frame_rule, read_frames, Frame, Role};
    use crate::model::explain::Phase;

    fn decided(frames: &[(&str, &str)]) -> Option<Phase> {
        let frames: Vec<Frame> = (frames.iter().enumerate())
            .map(|(at, (function, file))| Frame {
                line: at as u64 + 1,
                function: function.to_string(),
                file: file.to_string(),
                called: false,
                code: None,
            })
            .collect();
        // A wrapper decides only when nothing else does.
        let verdict = read_frames(&frames);
        (verdict.decided.or(verdict.wrapper)).map(|(_, rule)| rule.phase)
    }

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
    use crate::analyze::phase::{frame_phase, read_frames, Frame};
    use crate::model::explain::Phase;

    fn decided(frames: &[(&str, &str)]) -> Option<Phase> {
        let frames: Vec<Frame> = frames
            .iter()
            .enumerate()
            .map(|(at, (function, file))| Frame {
                line: at as u64 + 1,
                function: function.to_string(),
                file: file.to_string(),
                called: false,
                code: None,
            })
            .collect();
        read_frames(&frames).decided.map(|(_, rule)| rule.phase)
    }

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
        let decided_or_wrapper = |frames: &[(&str, &str)]| {
            let frames: Vec<Frame> = frames
                .iter()
                .enumerate()
                .map(|(at, (function, file))| Frame {
                    line: at as u64 + 1,
                    function: function.to_string(),
                    file: file.to_string(),
                    called: false,
                    code: None,
                })
                .collect();
            let verdict = read_frames(&frames);
            (verdict.decided.or(verdict.wrapper)).map(|(_, rule)| rule.phase)
        };
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
}
