//! Unit tests of wordings added in session 32: TensorRT's plugin scratch space, Xinference's
//! model actor and Detectron2's retry on the CPU. Every line is synthetic.

use super::tests::one;

#[test]
fn tensorrts_plugin_scratch_space_is_the_gpus_with_both_sizes() {
    let message = one(
        "[01/08/2024-17:57:31] [TRT] [E] 4: [pluginV2Builder.cpp::makeRunner::519] Error Code 4: \
         Internal Error (Internal error: plugin node model/layers/0/mlp/PLUGIN_V2_MoE_0 requires \
         2547452477568 bytes of scratch space, but only 84987740160 is available. Try increasing \
         the workspace size with IBuilderConfig::setMemoryPoolLimit().",
    );
    assert!(message.is_gpu_oom);
    assert_eq!(
        message.figures.tried_to_allocate_bytes.map(|b| b.get()),
        Some(2_547_452_477_568)
    );
    assert_eq!(
        message.figures.free_bytes.map(|b| b.get()),
        Some(84_987_740_160)
    );
}

#[test]
fn an_apps_words_for_a_gpu_oom_it_caught() {
    for line in [
        "2024-01-18 21:27:53,300 xinference.core.model 35043 ERROR    Model actor is out of \
         memory.",
        "[04/19 09:58:05 d2.utils.memory]: Attempting to copy inputs of <function \
         paste_masks_in_image at 0x7fcfef44fef0> to CPU due to CUDA OOM",
    ] {
        assert!(one(line).is_gpu_oom, "{line}");
    }
}

#[test]
fn a_dataloader_worker_killed_names_its_pid() {
    let message = one("RuntimeError: DataLoader worker (pid 34801) is killed by signal: Killed.");
    assert!(!message.is_gpu_oom);
    assert_eq!(message.details.killed_pid, Some(34801));
}
