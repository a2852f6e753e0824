//! Whole-text checks of the phase rules added for session 36's blind batches (helper p2).
//! Every text is synthetic.

use super::explain_text;
use crate::model::explain::Phase;

#[test]
fn darknets_layer_table_is_the_networks_build() {
    let table = "layer     filters    size              input                output\n\
                 \x20   0 conv     32  3 x 3 / 1   416 x 416 x   3   ->   416 x 416 x  32  0.299 BFLOPs\n\
                 \x20   1 conv     64  3 x 3 / 2   416 x 416 x  32   ->   208 x 208 x  64  1.595 BFLOPs\n";
    let failed = format!("{table}    2 CUDA Error: out of memory\n");
    assert_eq!(explain_text(&failed).phase.failed_in, Phase::WeightsLoad);
    // The network built and loaded (`Learning Rate: …`): the table's load had ended.
    let trained = format!(
        "{table}Learning Rate: 0.001, Momentum: 0.9, Decay: 0.0005\n\
         CUDA Error: out of memory\n"
    );
    assert_ne!(explain_text(&trained).phase.failed_in, Phase::WeightsLoad);
    // A sentence with the table's words is no header.
    let prose = "the layer filters size and the input and output shapes\n\
                 CUDA Error: out of memory\n";
    assert_ne!(explain_text(prose).phase.failed_in, Phase::WeightsLoad);
}

#[test]
fn a_darknet_cuda_check_in_its_main_is_start_up() {
    let text = "CUDA status Error: file: ./src/darknet.c : () : line: 470 : build time: Oct  3 \
                2020 - 11:21:14\n\n CUDA Error: out of memory\n";
    assert_eq!(explain_text(text).phase.failed_in, Phase::Startup);
    let other = "CUDA status Error: file: ./src/network_kernels.cu : () : line: 70 : build time: \
                 Oct  3 2020 - 11:21:14\n\n CUDA Error: out of memory\n";
    assert_ne!(explain_text(other).phase.failed_in, Phase::Startup);
}

#[test]
fn fairseqs_trainer_logging_an_oom_is_a_training_step() {
    let text = "2021-08-02 18:54:21 | WARNING | fairseq.trainer | OOM: Ran out of memory with \
                exception: CUDA out of memory. Tried to allocate 68.00 MiB (GPU 0; 15.90 GiB \
                total capacity; 14.76 GiB already allocated; 55.75 MiB free; 15.10 GiB reserved \
                in total by PyTorch)\n";
    assert_eq!(explain_text(text).phase.failed_in, Phase::TrainingStep);
    // The same words from another logger are no trainer's.
    let other = text.replace("fairseq.trainer", "myapp.server");
    assert_ne!(explain_text(&other).phase.failed_in, Phase::TrainingStep);
}

#[test]
fn a_library_that_cannot_load_is_no_weights_load() {
    let text = "# Cannot load symbol cudnnCreateConvolutionDescriptor\n\n\
                Unable to load any of {libcudnn_cnn.so.9.1.0, libcudnn_cnn.so.9}\n\
                Invalid handle. Cannot load symbol cudnnCreateConvolutionDescriptor\n";
    assert_ne!(explain_text(text).phase.failed_in, Phase::WeightsLoad);
    let model = "# Cannot load model on a 3060: CUDA out of memory\n";
    assert_eq!(explain_text(model).phase.failed_in, Phase::WeightsLoad);
}

#[test]
fn a_bar_drawn_after_a_pipelines_load_is_its_sampling() {
    let load = "Loading pipeline components...: 100%|██████████| 5/5 [00:07<00:00,  1.57s/it]\n";
    let text = format!(
        "# it prints killed\n\n```\n{load}100%|██████████| 50/50 [01:40<00:00,  2.01s/it]\n\
         Killed\n```\n"
    );
    assert_eq!(explain_text(&text).phase.failed_in, Phase::Inference);
    // Killed right after the load, no bar after it: the load's.
    let loaded = format!("# it prints killed\n\n```\n{load}Killed\n```\n");
    assert_ne!(explain_text(&loaded).phase.failed_in, Phase::Inference);
}
