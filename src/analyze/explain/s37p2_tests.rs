//! Whole-text checks of session 37's (p2) rules: a kill stated in a title over a log ending in
//! a launcher's traceback under a load's line or an open stage, DeepSpeed's set-up lines, a
//! CJK sentence glued to an exit code, a training about to begin in Chinese, accelerate's
//! launcher warning.

use super::explain_text;
use super::whole_text::{engine, phase};
use crate::model::explain::Phase;
use crate::model::failure::EngineName;

const LAUNCHER: &str = "Traceback (most recent call last):\n  File \"/usr/local/bin/accelerate\", \
line 8, in <module>\n    sys.exit(main())\n  File \"/usr/lib/python3/site-packages/accelerate/\
commands/launch.py\", line 567, in simple_launcher\n    raise subprocess.CalledProcessError(\
returncode=process.returncode, cmd=cmd)\n";

#[test]
fn a_title_kill_right_after_a_part_of_the_load_is_the_loads() {
    let title = "died with <Signals.SIGKILL: 9> when starting the job\n\n";
    let loaded = format!(
        "{title}prepare accelerator\nloading u-net: <All keys matched successfully>\n\
         loading vae: <All keys matched successfully>\n{LAUNCHER}"
    );
    assert_eq!(phase(&loaded), Phase::WeightsLoad);
    let fetched = format!(
        "{title}Loading checkpoint shards: 100%|██████████| 2/2 [00:09<00:00]\n\
         Fetching 2 files: 100%|██████████| 2/2 [00:00<00:00]\n{LAUNCHER}"
    );
    assert_eq!(phase(&fetched), Phase::WeightsLoad);
    // Another line between the load and the launcher's traceback (the job went on), or a
    // fetch not finished, leaves it unread.
    let went_on = format!(
        "{title}loading vae: <All keys matched successfully>\ncaching latents.\n{LAUNCHER}"
    );
    assert_eq!(phase(&went_on), Phase::Unknown);
    let fetching =
        format!("{title}Fetching 2 files:  50%|█████     | 1/2 [00:01<00:01]\n{LAUNCHER}");
    assert_eq!(phase(&fetching), Phase::Unknown);
}

#[test]
fn deepspeed_zero_partitioning_is_its_set_up() {
    let text = "ERROR:torch.distributed.elastic.multiprocessing.api:failed (exitcode: -9) \
local_rank: 1\n\nlog:\nTime to load utils op: 0.15 seconds\n\
Rank: 0 partition count [2] and sizes[(3369211904, False)] \n\
ERROR:torch.distributed.elastic.multiprocessing.api:failed (exitcode: -9) local_rank: 1 (pid: \
91820) of binary: /bin/python\n";
    assert_eq!(phase(text), Phase::Startup);
    let optimizer = "ERROR:torch.distributed.elastic.multiprocessing.api:failed (exitcode: -9) \
local_rank: 1\n\nlog:\n[INFO] [logging.py:96:log_dist] [Rank 0] Using DeepSpeed Optimizer param \
name adamw as basic optimizer\nERROR:torch.distributed.elastic.multiprocessing.api:failed \
(exitcode: -9) local_rank: 1 (pid: 91820) of binary: /bin/python\n";
    assert_eq!(phase(optimizer), Phase::Startup);
    // A step's line after it is the training.
    let trained = optimizer.replace(
        "as basic optimizer\n",
        "as basic optimizer\n{'loss': 1.2, 'learning_rate': 1e-05, 'epoch': 0.1}\n",
    );
    assert_ne!(phase(&trained), Phase::Startup);
}

#[test]
fn an_exit_code_glued_to_a_cjk_sentence_is_read() {
    let report = explain_text("执行finetune.sh遇到exits with return code = -9是怎么错误呢？\n");
    let kill = report.ooms.first().expect("the kill is read");
    assert_eq!(kill.details.exit_code, Some(-9));
    // A longer number is another code.
    assert!(explain_text("遇到exits with return code = -90是什么\n")
        .ooms
        .is_empty());
}

#[test]
fn a_training_about_to_begin_in_chinese_is_its_set_up() {
    let log = "\n```\n[INFO] Using auto half precision backend\n```\n";
    let about = format!(
        "finetune.sh exits with return code = -9\n\n终于要训起来的时候，报下面错误：\n{log}"
    );
    assert_eq!(phase(&about), Phase::Startup);
    let starting =
        format!("finetune.sh exits with return code = -9\n\n即将开始训练时报错：\n{log}");
    assert_eq!(phase(&starting), Phase::Startup);
    // `要训练的时候` (when I want to train) names any moment of it: not the set-up.
    let want =
        format!("finetune.sh exits with return code = -9\n\n每次要训练的时候就报错：\n{log}");
    assert_ne!(phase(&want), Phase::Startup);
}

#[test]
fn accelerates_default_warning_names_the_launcher() {
    let text = "The following values were not passed to `accelerate launch` and had defaults \
used instead:\n\t`--num_processes` was set to a value of `1`\nKilled\n";
    assert_eq!(engine(text), EngineName::Accelerate);
    assert_ne!(
        engine("The following values were passed to the launcher:\nKilled\n"),
        EngineName::Accelerate
    );
}
