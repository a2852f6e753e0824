//! Whole-text checks of session 39's RL-framework rule: verl, OpenRLHF and NeMo-RL by their own
//! packages and Ray actors are the program that ran (`other`), over the torch and vLLM frames
//! of their workers; a path that only holds one of the words is not theirs.

use super::whole_text::engine;
use crate::model::failure::EngineName;

const TORCH_OOM: &str = "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 98.00 \
MiB. GPU 0 has a total capacity of 22.09 GiB of which 54.00 MiB is free.\n";

fn traceback(frames: &[&str]) -> String {
    let mut text = String::from("Traceback (most recent call last):\n");
    for frame in frames {
        text.push_str(&format!(
            "  File \"{frame}\", line 10, in run\n    step()\n"
        ));
    }
    text.push_str(TORCH_OOM);
    text
}

#[test]
fn rl_frameworks_own_packages_name_the_program() {
    for package in [
        "/workspace/verl/verl/trainer/ppo/ray_trainer.py",
        "/usr/local/lib/python3.10/dist-packages/verl/workers/fsdp_workers.py",
        "/opt/OpenRLHF/openrlhf/trainer/ppo_trainer.py",
        "/opt/RL/nemo_rl/algorithms/grpo.py",
    ] {
        let text = traceback(&[
            package,
            "/usr/local/lib/python3.10/dist-packages/torch/nn/modules/module.py",
        ]);
        assert_eq!(engine(&text), EngineName::Other, "{package}");
    }
    let actor = format!(
        "(WorkerDict pid=3380) ERROR in ray::WorkerDict.actor_rollout_generate_sequences()\n\
         {TORCH_OOM}"
    );
    assert_eq!(engine(&actor), EngineName::Other);
}

#[test]
fn a_path_holding_the_words_is_not_an_rl_framework() {
    // `myverl/trainer/` and `conversion_nemo_rl/` are the user's own folders.
    for path in [
        "/home/me/myverl/trainer/run.py",
        "/home/me/conversion_nemo_rl/run.py",
    ] {
        let text = traceback(&[
            path,
            "/usr/local/lib/python3.10/dist-packages/torch/nn/modules/module.py",
        ]);
        assert_eq!(engine(&text), EngineName::Pytorch, "{path}");
    }
}
