//! Whole-text checks of what session 29's blind batches showed missing. Every text is
//! synthetic.

use super::explain_text;
use crate::model::explain::Phase;

use super::s26_tests::NEW_OOM;

#[test]
fn a_failed_request_logged_under_a_complete_message_is_read() {
    // BentoML's access line (`method=POST,path=/generate … (status=500`) under a message that
    // ends on its own line: the lines under it are kept, so the request decides.
    let text = format!(
        "{NEW_OOM}\n2025-11-25T10:59:14+0000 [INFO] [:1] _ (scheme=http,method=POST,\
         path=/generate,type=application/json,length=334179) (status=500,type=application/json,\
         length=74) 6320.340ms\n"
    );
    assert_eq!(explain_text(&text).phase.failed_in, Phase::Inference);
    // A request that succeeded under it is not the failure's.
    let ok = text.replace("status=500", "status=200");
    assert_eq!(explain_text(&ok).phase.failed_in, Phase::Unknown);
}

#[test]
fn a_drivers_traceback_under_a_workers_failure_names_the_stage() {
    let site = "/usr/lib/python3.12/site-packages/vllm";
    let worker = "(VllmWorkerProcess pid=11) ERROR 03-10 09:59:57 multiproc_worker_utils.py:242]";
    let text = format!(
        "{worker} Traceback (most recent call last):\n\
         {worker}   File \"{site}/distributed/parallel_state.py\", line 331, in all_gather\n\
         {worker}     return self.device_communicator.all_gather(input_, dim)\n\
         {worker} {NEW_OOM}\n\
         [rank0]:   File \"{site}/engine/llm_engine.py\", line 421, in _initialize_kv_caches\n\
         [rank0]:     self.model_executor.determine_num_available_blocks())\n\
         [rank0]:   File \"{site}/executor/executor_base.py\", line 102, in \
         determine_num_available_blocks\n\
         [rank0]:     results = self.collective_rpc(\"determine_num_available_blocks\")\n"
    );
    assert_eq!(explain_text(&text).phase.failed_in, Phase::Profiling);
    // The caller's own frames under it are not an engine's driver: nothing decides.
    let own = text
        .replace(&format!("{site}/engine"), "/srv/app")
        .replace(&format!("{site}/executor"), "/srv/app");
    assert_eq!(explain_text(&own).phase.failed_in, Phase::Unknown);
}

#[test]
fn a_bar_drawn_on_the_failures_line_names_the_stage() {
    let text = format!("Batch Detection:   0%|          | 0/7 [00:00<?, ?it/s]{NEW_OOM}\n");
    assert_eq!(explain_text(&text).phase.failed_in, Phase::Inference);
    // A bar after the error on the line is not the one running at it.
    let after = format!("{NEW_OOM} Batch Detection:   0%|          | 0/7 [00:00<?, ?it/s]\n");
    assert_eq!(explain_text(&after).phase.failed_in, Phase::Unknown);
}

#[test]
fn a_host_kill_that_cut_a_running_bar_lets_the_words_name_the_stage() {
    let text = "$ python3 -m app.trainer --config confs/a.txt\n\
                Training with a single process on 1 GPUs.\n \
                31%|#####     | 331/1063 [01:06<03:59,  3.06it/s]Killed\n";
    assert_eq!(explain_text(text).phase.failed_in, Phase::TrainingStep);
    // The same words with no bar cut: the job, not its stage.
    let no_bar = "$ python3 -m app.trainer --config confs/a.txt\n\
                  Training with a single process on 1 GPUs.\nKilled\n";
    assert_eq!(explain_text(no_bar).phase.failed_in, Phase::Unknown);
}
