//! Unit tests of wordings added in session 56: a TensorFlow tensor OOM whose node text names the
//! host after the GPU, PyTorch's message with `Pytorch` in another case or cut inside its last
//! phrase, RMM's `out_of_memory` cut by a paste, a heading that ends with PyTorch's class.

use super::*;
use crate::model::failure::{OomKind, OomMessage};
use crate::model::gpu::CudaOrdinal;
use crate::model::Bytes;

fn first(text: &str) -> Option<OomMessage> {
    parse_text(text).into_iter().next()
}

#[test]
fn a_tensorflow_tensor_oom_is_the_device_it_names_first() {
    // faceswap's debug log: the failing op on GPU:0, then a `_Recv` node whose text names the
    // CPU as its receiving device.
    let text = "DEBUG    Error in thread (training_0): OOM when allocating tensor with \
        shape[16384,1024] and type float on /job:localhost/replica:0/task:0/device:GPU:0 by \
        allocator GPU_0_bfc\\n [[{{node training_1/Adam/mul_43}} = Mul[T=DT_FLOAT]()]]\\n \
        [[{{node loss_1/mul/_401}} = _Recv[client_terminated=false, \
        recv_device=\"/job:localhost/replica:0/task:0/device:CPU:0\", \
        send_device=\"/job:localhost/replica:0/task:0/device:GPU:0\"]()]]\n";
    let message = first(text).expect("a message");
    assert!(message.is_gpu_oom, "{message:#?}");
    assert_eq!(message.kind, OomKind::TensorflowOomTensor);
    assert_eq!(message.figures.gpu_index, Some(CudaOrdinal(0)));
    assert_eq!(
        message.figures.tried_to_allocate_bytes,
        Some(Bytes(16384 * 1024 * 4))
    );
    // An op placed on the host is still the host's.
    let host = "OOM when allocating tensor with shape[1000000,4096] and type float on \
        /job:localhost/replica:0/task:0/device:CPU:0 by allocator cpu\n";
    let message = first(host).expect("a message");
    assert!(!message.is_gpu_oom, "{message:#?}");
}

#[test]
fn pytorchs_old_message_reads_its_reserved_figure_in_any_case() {
    let text = "RuntimeError: CUDA out of memory. Tried to allocate 64.00MiB (GPU 0; 4.00 GiB \
        total capacity; 2.28 GiB already allocated; 54.45 MiB free; 2.42 GiB reserved in total \
        by Pytorch)\n";
    let message = first(text).expect("a message");
    assert!(message.is_gpu_oom);
    assert_eq!(
        message.figures.reserved_total_bytes,
        Some(Bytes((2.42 * 1024.0 * 1024.0 * 1024.0_f64).round() as u64))
    );
}

#[test]
fn a_message_cut_inside_its_unallocated_phrase_keeps_the_figure() {
    let text = "torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 10.54 GiB. \
        GPU 0 has a total capacty of 21.95 GiB of which 6.78 GiB is free. Including non-PyTorch \
        memory, this process has 15.16 GiB memory in use. Of the allocated memory 14.77 GiB is \
        allocated by PyTorch, and 198.92 MiB is reser";
    let message = first(text).expect("a message");
    assert_eq!(
        message.figures.reserved_unallocated_bytes,
        Some(Bytes((198.92 * 1024.0 * 1024.0_f64).round() as u64))
    );
    // Cut after `is res`: still only that phrase of the message.
    let shorter = text.trim_end_matches("er");
    let message = first(shorter).expect("a message");
    assert!(message.figures.reserved_unallocated_bytes.is_some());
}

#[test]
fn rmms_out_of_memory_cut_by_the_paste_is_the_gpus() {
    let text = "  File \"cuml/cluster/kmeans_mg.pyx\", line 152, in fit\n\
        MemoryError: std::bad_alloc: out_of_m\n";
    let message = first(text).expect("a message");
    assert!(message.is_gpu_oom, "{message:#?}");
    // Not the host's bare `std::bad_alloc`.
    let host = "terminate called after throwing an instance of 'std::bad_alloc'\n  what():  \
        std::bad_alloc\n";
    let message = first(host).expect("a message");
    assert!(!message.is_gpu_oom);
}

#[test]
fn a_heading_that_ends_with_pytorchs_class_names_the_failure() {
    let text = "# Returned exception: 'LoLLMsWebUI' object has no attribute 'socketio' AND \
        torch.cuda.OutOfMemoryError\n\n## Expected Behavior\nModel being loaded\n";
    let message = first(text).expect("a message");
    assert!(message.is_gpu_oom, "{message:#?}");
}

#[test]
fn ram_named_apart_from_the_gpus_memory_is_the_hosts() {
    // 内存 beside 显存 in the same line: the writer keeps 内存 for the host's RAM.
    let text = "是我的内存不够，实验室才入手了一台机器，GTX 1080Ti 11G显存，16G内存\n";
    assert!(first(text).is_none_or(|message| !message.is_gpu_oom));
    // 内存 said of a job on a named card, 显存 not named: the GPU's, as many reporters write it.
    let card = "我在用T4单卡跑7B int4的QLoRA微调，跑不了，显示内存溢出\n";
    assert!(first(card).is_some_and(|message| message.is_gpu_oom));
}

#[test]
fn tensorflows_class_named_with_what_ran_is_the_failure() {
    let text =
        "ResourceExhaustedError when running the file evaluate_sample.py with my own video\n";
    let message = first(text).expect("a message");
    assert!(message.is_gpu_oom, "{message:#?}");
    // Not the class in code that catches it.
    let code = "except tf.errors.ResourceExhaustedError as e:\n";
    assert!(first(code).is_none_or(|message| !message.is_gpu_oom));
}
