//! Frame rules of jobs and set-ups around a run: conversions and quantizers, distributed
//! set-up, batch-size probes.

/// Conversions and quantizers run as their own job (session 15): each rule fires on its
/// library's file, encloses the calibration forward below it, and stays silent on a user's
/// function of the same name.
mod conversion_frame_tests {
    use crate::analyze::phase::{frame_phase, read_frames};
    use crate::model::explain::Phase;

    use super::super::frame;

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
