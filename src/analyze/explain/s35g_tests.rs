//! Whole-text checks of what session 35's blind batches (CJK threads, research code) showed
//! missing: short excerpts of the texts (names and sizes as printed), and the cases each rule
//! must leave alone.

use super::whole_text::{gpu_oom, phase, TORCH_OOM};
use crate::model::explain::Phase;

#[test]
fn tiny_cuda_nns_failed_cuda_malloc_is_the_gpus_memory() {
    let text = "13:54:28 ERROR    Uncaught exception: Could not allocate memory: C:\\instant-ngp\\\
                dependencies\\tiny-cuda-nn\\include\\tiny-cuda-nn/gpu_memory.h:112 cudaMalloc(&\
                rawptr, n_bytes+DEBUG_GUARD_SIZE*2) failed with error out of memor\n";
    assert!(gpu_oom(text));
    let older = "RuntimeError: CUDA Error: cudaMalloc(&rawptr, n_bytes) failed with error out of \
                 memory\n";
    assert!(gpu_oom(older));
    // Another status of the same check is no memory shortage.
    let other = "RuntimeError: CUDA Error: cudaEventRecord(m_event, m_stream) failed with error \
                 an illegal memory access was encountered\n";
    assert!(!gpu_oom(other));
}

#[test]
fn japanese_gpu_memory_not_enough_is_an_oom() {
    let text =
        "これはおそらく先生がdlbox1で学習をしていたので，GPUメモリが足りずに学習できなかった\
                ようですね．\n";
    assert!(gpu_oom(text));
    assert!(gpu_oom("VRAMが足りないのでエラーになります\n"));
    // Enough memory, or too few GPUs, is no shortage of the GPU's memory.
    assert!(!gpu_oom("GPUメモリは足りています\n"));
    assert!(!gpu_oom("GPUが足りないので順番に使ってください\n"));
}

#[test]
fn tensorflows_uninitialised_copy_destination_is_the_gpus_memory() {
    let text =
        "tensorflow.python.framework.errors_impl.InternalError: Failed copying input tensor \
                from /job:localhost/replica:0/task:0/device:CPU:0 to /job:localhost/replica:0/\
                task:0/device:GPU:0 in order to run Identity: Dst tensor is not initialized. \
                [Op:Identity]\n";
    assert!(gpu_oom(text));
    // Its source tensor uninitialised is a program's bug, not an allocation.
    let source = "InternalError: Src tensor is not initialized.\n";
    assert!(!gpu_oom(source));
}

#[test]
fn a_question_put_to_a_chat_model_is_inference() {
    let text = format!("结果问“你好啊”就会爆显存：\n{TORCH_OOM}");
    assert_eq!(phase(&text), Phase::Inference);
    let text = format!("问特定问题会出现爆显存\n{TORCH_OOM}");
    assert_eq!(phase(&text), Phase::Inference);
    // The reporter's own question to the thread names no stage.
    let text = format!("请问一个问题，为什么会爆显存\n{TORCH_OOM}");
    assert_eq!(phase(&text), Phase::Unknown);
    let text = format!("问个问题，为什么会爆显存\n{TORCH_OOM}");
    assert_eq!(phase(&text), Phase::Unknown);
}

#[test]
fn an_evaluation_run_in_a_chinese_sentence_is_inference() {
    let text = format!(
        "在RTX 3090单卡上通过sft对llama-2-7b微调后进行evaluate会报OOM的错误，而在此commit之前则不会。\n\
         {TORCH_OOM}"
    );
    assert_eq!(phase(&text), Phase::Inference);
    // The word without a verb of running, or without the failure after it, is no stage.
    let text = format!("evaluate会报OOM的错误\n{TORCH_OOM}");
    assert_eq!(phase(&text), Phase::Unknown);
    let text = format!("进行evaluate会很慢\n\n{TORCH_OOM}");
    assert_eq!(phase(&text), Phase::Unknown);
}
