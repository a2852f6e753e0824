//! Whole-text checks of what session 28's blind batches showed missing. Every text is
//! synthetic.

use super::explain_text;
use crate::model::explain::Phase;

use super::s26_tests::NEW_OOM;

#[test]
fn a_notebook_cells_arrow_gives_the_statement_of_its_call() {
    // IPython 8: the cell's arrow line is the statement; the cell's listing shows `backward`.
    let text = format!(
        "OutOfMemoryError                          Traceback (most recent call last)\n\
         Cell In[7], line 4\n      \
         2 for batch in loader:\n      \
         3     batch = {{k: v.to(\"cuda\") for k, v in batch.items()}}\n\
         ----> 4     outputs = model(**batch)\n      \
         5     loss = outputs.loss\n      \
         6     loss.backward()\n\n\
         File /opt/conda/lib/python3.10/site-packages/torch/nn/modules/module.py:1518, in \
         Module._wrapped_call_impl(self, *args, **kwargs)\n\
         -> 1518     return self._call_impl(*args, **kwargs)\n\n\
         {NEW_OOM}\n"
    );
    assert_eq!(explain_text(&text).phase.failed_in, Phase::TrainingStep);
    // The same cell without a backward listed shows no stage.
    let other = text.replace("loss.backward()", "print(loss)");
    assert_eq!(explain_text(&other).phase.failed_in, Phase::Unknown);
}

#[test]
fn a_rich_arrow_gives_the_statement_of_the_frame_above() {
    let text = format!(
        "\u{256d}\u{2500} Traceback (most recent call last) \u{2500}\u{256e}\n\
         \u{2502} /srv/segment.py:51 in run                               \u{2502}\n\
         \u{2502}                                                          \u{2502}\n\
         \u{2502} \u{2771} 51 \u{2502}   \u{2502}   masks = model(tiles).argmax(1).cpu()   \u{2502}\n\
         \u{2502}                                                          \u{2502}\n\
         \u{2502} /venv/lib/python3.12/site-packages/torch/nn/modules/module.py:177 \u{2502}\n\
         \u{2502} 9 in _wrapped_call_impl                                   \u{2502}\n\
         \u{2502} \u{2771} 1779 \u{2502}   return self._call_impl(*args, **kwargs) \u{2502}\n\
         \u{2570}\u{2500}\u{256f}\n\
         {NEW_OOM}\n"
    );
    assert_eq!(explain_text(&text).phase.failed_in, Phase::Inference);
}

#[test]
fn a_timestamp_on_every_line_does_not_hide_a_frames_statement() {
    let text = format!(
        "2026-12-04T18:47:08.231175317Z Traceback (most recent call last):\n\
         2026-12-04T18:47:08.232175317Z   File \"/app/finetune_resnet.py\", line 40, in <module>\n\
         2026-12-04T18:47:08.232275317Z     loss = F.cross_entropy(model(x), y)\n\
         2026-12-04T18:47:08.232375317Z   File \"/venv/lib/python3.12/site-packages/torch/nn/\
         modules/module.py\", line 1779, in _wrapped_call_impl\n\
         2026-12-04T18:47:08.232475317Z     return self._call_impl(*args, **kwargs)\n\
         2026-12-04T18:47:08.234419317Z {NEW_OOM}\n"
    );
    assert_eq!(explain_text(&text).phase.failed_in, Phase::TrainingStep);
}

#[test]
fn a_comfyui_prompt_runs_its_model_once_loaded() {
    // The load finished (`loaded partially` after a log prefix), then the failure: the model ran.
    let text = "2024-09-11 11:50:30,102 - root - INFO - got prompt\n\
                2024-09-11 11:50:30,198 - root - INFO - Requested to load Flux\n\
                2024-09-11 11:50:30,198 - root - INFO - Loading 1 new model\n\
                2024-09-11 11:51:35,123 - root - INFO - loaded partially 11337.9 11337.8 1\n\
                2024-09-11 11:51:35,196 - root - INFO - Unloading models for lowram load.\n\
                2024-09-11 11:51:36,769 - root - ERROR - !!! Exception during processing !!! \
                Allocation on device\n\
                torch.OutOfMemoryError: Allocation on device\n";
    assert_eq!(explain_text(text).phase.failed_in, Phase::Inference);
    // A prompt taken with no load finished and no model's forward shown: its loader nodes may
    // be reading a checkpoint.
    let text = "2024-09-15 22:48:26,140 - root - INFO - Prompt executed in 41.11 seconds\n\
                2024-09-15 22:50:14,359 - root - INFO - got prompt\n\
                2024-09-15 22:50:34,519 - root - ERROR - !!! Exception during processing !!! \
                Allocation on device\n\
                torch.OutOfMemoryError: Allocation on device\n";
    assert_eq!(explain_text(text).phase.failed_in, Phase::Unknown);
}

#[test]
fn a_wrappers_words_before_the_runtimes_prefix_name_the_stage() {
    let text = "core.errors.TranscriptionError: Transcription failed: CUDA failed with error an \
                illegal memory access was encountered\n";
    assert_eq!(explain_text(text).phase.failed_in, Phase::Inference);
}

#[test]
fn a_shell_script_named_for_its_work_names_the_stage() {
    let text = "I ran bash inference.sh with the defaults:\n\
                File \"wan/models/transformer3d.py\", line 203, in attention\n    \
                out = torch.nn.functional.scaled_dot_product_attention(\n\
                torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 62.02 GiB.\n";
    assert_eq!(explain_text(text).phase.failed_in, Phase::Inference);
    let text = format!(
        "numactl -C 11-15 python ./benchmark_docker_throughput.py --backend vllm\n{NEW_OOM}\n"
    );
    assert_eq!(explain_text(&text).phase.failed_in, Phase::Inference);
}

#[test]
fn a_dotted_loggers_stage_line_after_an_iso_time() {
    let text = "2021-04-15T13:01:41 | mmf.trainers.core.evaluation_loop: Starting test inference \
                predictions\n\
                RuntimeError: CUDA out of memory. Tried to allocate 20.00 MiB\n";
    assert_eq!(explain_text(text).phase.failed_in, Phase::Inference);
}

#[test]
fn apps_that_name_the_stage_of_their_failure() {
    let text = "2024-05-02 10:01:02,003 Could not predict complex_1. Not Enough GPU memory? \
                RESOURCE_EXHAUSTED: Failed to allocate request for 35.58GiB (38204550232B) on \
                device ordinal 0\n";
    assert_eq!(explain_text(text).phase.failed_in, Phase::Inference);
    let text = "../src/tree/updater_gpu_hist.cu:784: Exception in gpu_hist: [11:01:50] \
                ../src/c_api/../data/../common/device_helpers.cuh:431: Memory allocation error \
                on worker 0: std::bad_alloc: cudaErrorMemoryAllocation: out of memory\n\
                - Free memory: 8126464\n\
                - Requested memory: 33554432\n";
    let report = explain_text(text);
    assert_eq!(report.phase.failed_in, Phase::TrainingStep);
    let oom = report.oom.expect("figures");
    assert_eq!(oom.free_bytes.map(|b| b.get()), Some(8_126_464));
    assert_eq!(
        oom.tried_to_allocate_bytes.map(|b| b.get()),
        Some(33_554_432)
    );
}

#[test]
fn a_json_event_cut_by_its_length_still_names_the_stage() {
    let long = "x".repeat(2000);
    let text = format!(
        "{{\"ts\": \"2026-12-04T18:44:39.771Z\", \"level\": \"error\", \"msg\": \"rerank failed\", \
         \"request_id\": \"req-0003\", \"exc_info\": \"Traceback (most recent call last):\\n \
         {long}\\ntorch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 \
         has a total capacity of 139.80 GiB of which 1.00 GiB is free.\"}}\n"
    );
    assert_eq!(explain_text(&text).phase.failed_in, Phase::Inference);
}

#[test]
fn a_libraries_advice_to_train_is_not_the_reporters_words() {
    let text = format!(
        "- MISSING:\tthose params were newly initialized because missing from the checkpoint. \
         Consider training on your downstream task.\n{NEW_OOM}\n"
    );
    assert_ne!(explain_text(&text).phase.failed_in, Phase::TrainingStep);
}

#[test]
fn a_lone_process_holding_the_reserve_is_reported_as_this_process() {
    let text = "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 224.00 MiB. GPU 0 \
                has a total capacity of 39.39 GiB of which 14.00 MiB is free. Process 1117993 has \
                39.36 GiB memory in use. Of the allocated memory 38.34 GiB is allocated by \
                PyTorch, and 500.00 MiB is reserved by PyTorch but unallocated.\n";
    let oom = explain_text(text).oom.expect("figures");
    assert!(oom.process_in_use_bytes.is_some());
    assert!(oom.other_processes.is_empty());
    assert!(oom
        .derived_fields
        .iter()
        .any(|field| field == "process_in_use_bytes"));
}

#[test]
fn messages_logged_or_abbreviated_without_their_head() {
    // numpy's message logged without its class: the host's memory, its size read.
    let report = explain_text(
        "2024-08-25 23:55:25.082 | ERROR | magic_pdf.tools.cli:parse_doc:69 - Unable to allocate \
         41.9 MiB for an array with shape (6, 276, 6625) and data type float32\n",
    );
    assert!(!report.is_gpu_oom);
    let details = &report.ooms[0].details;
    assert!(details.host_required_bytes.is_some());
    // PyTorch's class with the figure the reporter kept.
    let report = explain_text("- `torch.OutOfMemoryError: Tried to allocate 3.56 GiB...`\n");
    assert!(report.is_gpu_oom);
    let oom = report.oom.expect("figures");
    assert!(oom.tried_to_allocate_bytes.is_some());
    // Not held for a later message to replace, as the class alone is.
    let report = explain_text(
        "- `torch.OutOfMemoryError: Tried to allocate 3.56 GiB...`\n\n\
         - `ncclUnhandledCudaError: Cuda failure 2 'out of memory'`\n",
    );
    assert_eq!(report.ooms.len(), 2);
    assert!(report
        .oom
        .and_then(|oom| oom.tried_to_allocate_bytes)
        .is_some());
    // Code naming the class is no failure.
    let report = explain_text("except torch.cuda.OutOfMemoryError: Tried to allocate\n");
    assert!(!report.is_gpu_oom);
}

#[test]
fn rays_memory_monitor_names_the_killed_task_and_the_node() {
    let report = explain_text(
        "ray.exceptions.OutOfMemoryError: Task was killed due to the node running low on memory.\n\
         Memory on the node (IP: 10.20.49.141, ID: 4748aa6d) where the task (actor ID: 9e43ace6, \
         name=WorkerDict.__init__, pid=4100606, memory used=56.57GB) was running was 246.41GB / \
         251.54GB (0.979583), which exceeds the memory usage threshold of 0.95.\n",
    );
    assert!(!report.is_gpu_oom);
    let details = &report.ooms[0].details;
    assert_eq!(details.killed_pid, Some(4_100_606));
    assert!(details.killed_rss_bytes.is_some());
    assert!(details.host_usage_bytes.is_some() && details.host_limit_bytes.is_some());
    // The killed worker's row of the top memory users names its task.
    let report = explain_text(
        "ray.exceptions.OutOfMemoryError: Task was killed due to the node running low on memory.\n\
         Memory on the node (IP: 10.0.0.1, ID: 47) where the task (actor ID: 9e, name=W, \
         pid=4100606, memory used=56.57GB) was running was 246.41GB / 251.54GB (0.97), which \
         exceeds the memory usage threshold of 0.95. Ray killed this worker (ID: c9) because it \
         was the most recently scheduled task.\n\
         Top 10 memory users:\n\
         PID\tMEM(GB)\tCOMMAND\n\
         4100606\t56.57\tray::WorkerDict.actor_rollout_generate_sequences\n\
         4075157\t0.35\tpython3 -m verl.trainer.main_ppo\n",
    );
    assert_eq!(
        report.ooms[0].details.killed_process.as_deref(),
        Some("ray::WorkerDict.actor_rollout_generate_sequences")
    );
    assert_eq!(report.phase.failed_in, Phase::Inference);
}

#[test]
fn transformers_refusing_a_quantized_models_device_map_is_a_load_that_did_not_fit() {
    let text = "  File \"/usr/local/lib/python3.11/site-packages/transformers/quantizers/\
                quantizer_bnb_4bit.py\", line 102, in validate_environment\n    \
                raise ValueError(\n\
                ValueError: Some modules are dispatched on the CPU or the disk. Make sure you \
                have enough GPU RAM to fit the quantized model. If you want to dispatch the model \
                on the CPU or the disk while keeping these modules in 32-bit, you need to set \
                `llm_int8_enable_fp32_cpu_offload=True` and pass a custom `device_map` to \
                `from_pretrained`.\n";
    let report = explain_text(text);
    assert!(report.is_gpu_oom);
    assert_eq!(report.phase.failed_in, Phase::WeightsLoad);
}
