//! Whole-text checks of session 36's rules for verl's Ray runs: the node's largest user of
//! memory when Ray kills a driver, and the rollout engine's KV cache being built.

use super::whole_text::phase;
use crate::model::explain::Phase;

const RAY_KILL: &str = "ray.exceptions.OutOfMemoryError: Task was killed due to the node running \
low on memory.\nMemory on the node (IP: 10.0.0.1, ID: 693a) where the task (task ID: 05f2, \
name=main_task, pid=2628336, memory used=2.80GB) was running was 479.24GB / 503.75GB (0.951345), \
which exceeds the memory usage threshold of 0.95. Ray killed this worker (ID: 05c1) because it \
was the most recently scheduled task; to see more information about memory usage on this node, \
use `ray logs raylet.out -ip 10.0.0.1`. Top 10 memory users:\nPID\tMEM(GB)\tCOMMAND\n";

#[test]
fn the_nodes_largest_ray_task_names_the_stage_when_the_killed_worker_does_not() {
    let text = format!(
        "{RAY_KILL}2629274\t28.07\tray::WorkerDict.actor_rollout_generate_sequences\n\
         2629833\t28.04\tray::WorkerDict.actor_rollout_generate_sequences\n\
         2628336\t2.80\tray::main_task\n2625824\t0.33\tpython3 -\n"
    );
    assert_eq!(phase(&text), Phase::Inference);
    // The largest user not a Ray task (a process of the user's), or two tasks of different
    // stages sharing the top, name nothing.
    let other =
        format!("{RAY_KILL}2629274\t28.07\tpython3 train.py\n2628336\t2.80\tray::main_task\n");
    assert_eq!(phase(&other), Phase::Unknown);
    let tied = format!(
        "{RAY_KILL}2629274\t28.07\tray::WorkerDict.actor_rollout_generate_sequences\n\
         2629833\t28.07\tray::WorkerDict.actor_update_actor\n2628336\t2.80\tray::main_task\n"
    );
    assert_eq!(phase(&tied), Phase::Unknown);
}

#[test]
fn verls_rollout_cache_being_built_is_the_kv_cache() {
    let text = "(WorkerDict pid=3566775) Total steps: 435, num_warmup_steps: 0\n\
        (WorkerDict pid=3566775) before init cache memory allocated: 5.96926464GB, reserved: \
        6.079643648GB\n\
        (raylet) A worker died or was killed while executing a task by an unexpected system \
        error. RayTask ID: ffff Worker ID: 9a3e Node ID: 77aa Worker IP address: 10.0.0.1 \
        Worker port: 4000 Worker PID: 3566775 Worker exit type: SYSTEM_ERROR Worker exit \
        detail: Worker unexpectedly exits with a connection error code 2. End of file. There \
        are some potential root causes. (1) The process is killed by SIGKILL by OOM killer due \
        to high memory usage.\n";
    assert_eq!(phase(text), Phase::KvCacheAlloc);
    // Once the cache is built, the failure is past it.
    let built = text.replace(
        "(raylet)",
        "(WorkerDict pid=3566775) after init cache memory allocated: 29.5GB, reserved: 29.6GB\n\
         (raylet)",
    );
    assert_ne!(phase(&built), Phase::KvCacheAlloc);
}
