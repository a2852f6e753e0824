//! Frame rules of frameworks and libraries: the blind batches' frames, the second blind
//! batch's frameworks and apps, the tenth session's framework stages.

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
    use crate::analyze::phase::{frame_phase, read_frames, wrapping_phrase};
    use crate::model::explain::Phase;

    const I: Option<Phase> = Some(Phase::Inference);
    const W: Option<Phase> = Some(Phase::WeightsLoad);
    const T: Option<Phase> = Some(Phase::TrainingStep);

    use super::super::frame;

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
    use crate::analyze::phase::frame_phase;
    use crate::model::explain::Phase;

    const I: Option<Phase> = Some(Phase::Inference);
    const W: Option<Phase> = Some(Phase::WeightsLoad);
    const T: Option<Phase> = Some(Phase::TrainingStep);
    const F: Option<Phase> = Some(Phase::FormatConversion);
    const S: Option<Phase> = Some(Phase::Startup);

    use super::super::decided;

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
            ("generate_sequences", "verl/workers/fsdp_workers.py", I),
            (
                "actor_rollout_generate_sequences",
                "verl/single_controller/ray/base.py",
                I,
            ),
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
