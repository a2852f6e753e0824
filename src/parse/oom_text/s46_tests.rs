//! Unit tests of wordings added in session 46: NVIDIA DALI's and nvJPEG's device allocations,
//! Theano's `device_malloc` with its figures and its CNMeM pool, a title gluing PyTorch's words
//! by underscores, and a GPU's memory said to be lacking.

use super::*;
use crate::model::failure::OomMessage;

fn first_gpu(text: &str) -> Option<OomMessage> {
    parse_text(text)
        .into_iter()
        .find(|message| message.is_gpu_oom)
}

#[test]
fn dali_and_nvjpeg_allocation_failures_are_gpu_ooms() {
    for said in [
        "RuntimeError: Critical error in pipeline: CUDA allocation failed\n",
        "RuntimeError: Critical error in pipeline: Error in thread 2: [/opt/dali/dali/pipeline/\
         operators/decoder/nvjpeg/decoupled_api/nvjpeg_decoder_decoupled_api.h:346] NVJPEG \
         error \"5\" : NVJPEG_STATUS_ALLOCATOR_FAILURE n04418357_26036.JPEG\n",
        "Error in thread 31: nvJPEG error (5): The user-provided allocator functions, for either \
         memory allocation or for releasing the memory, returned a non-zero code.\n",
    ] {
        assert!(first_gpu(said).is_some(), "{said}");
    }
    let sized = first_gpu(
        "2020-03-02 10:14:01.1: E tensorflow/core/common_runtime/executor.cc:642] Executor \
         failed\nCan't allocate 129499136 bytes on device 0.\n",
    )
    .expect("DALI's sized message");
    assert_eq!(
        sized.figures.tried_to_allocate_bytes,
        Some(Bytes(129_499_136))
    );
    assert_eq!(sized.figures.gpu_index.map(|index| index.0), Some(0));
    // The host's allocation is not the GPU's.
    assert!(first_gpu("Can't allocate 129499136 bytes on host.\n").is_none());
}

#[test]
fn theanos_device_malloc_and_cnmem_pool_are_gpu_ooms() {
    let malloc = first_gpu(
        "MemoryError: Error allocating 33554432 bytes of device memory (out of memory). Driver \
         report 21364736 bytes free and 11715084288 bytes total\n",
    )
    .expect("Theano's device_malloc");
    assert_eq!(
        malloc.figures.tried_to_allocate_bytes,
        Some(Bytes(33_554_432))
    );
    assert_eq!(malloc.figures.free_bytes, Some(Bytes(21_364_736)));
    assert_eq!(
        malloc.figures.total_capacity_bytes,
        Some(Bytes(11_715_084_288))
    );
    let pool = first_gpu(
        "ERROR (theano.sandbox.cuda): ERROR: Not using GPU. Initialisation of device gpu failed:\n\
         initCnmem: cnmemInit call failed! Reason=CNMEM_STATUS_OUT_OF_MEMORY. numdev=1\n",
    );
    assert!(pool.is_some());
}

#[test]
fn a_title_glued_by_underscores_or_lacking_video_memory_is_a_mention() {
    for said in [
        "# CUDA_out_of memory\n\n  File \"train.py\", line 280, in main\n    \
         model.optimize_parameters(current_iter)\n",
        "# When trying to generate a texture, I get an error about the lack of video memory.\n",
        "The run stops with a shortage of GPU memory on the 3060\n",
    ] {
        assert!(first_gpu(said).is_some(), "{said}");
    }
    for not_said in [
        "To avoid a lack of VRAM, enable tiled VAE.\n",
        "Is this a lack of GPU memory?\n",
    ] {
        assert!(first_gpu(not_said).is_none(), "{not_said}");
    }
}

#[test]
fn video_codecs_cuda_jl_and_tensorrts_allocator_are_gpu_ooms() {
    let nvenc = first_gpu(
        "[hevc_nvenc @ 0x55f45f5f5cc0] OpenEncodeSessionEx failed: out of memory (10): (no \
         details)\n[hevc_nvenc @ 0x55f45f5f5cc0] No capable devices found\n",
    );
    assert!(nvenc.is_some());
    assert!(first_gpu("runtime.cpp (16) - Cuda Error in allocate: 2\n").is_some());
    let julia = first_gpu(
        "ERROR: Out of GPU memory trying to allocate 146.250 MiB\nEffective GPU memory usage: \
         99.50% (3.792 GiB/3.810 GiB)\nMemory pool usage: 960.548 MiB (2.688 GiB reserved)\n\
         Stacktrace:\n",
    )
    .expect("CUDA.jl's error");
    let figures = &julia.figures;
    for (read, printed) in [
        (figures.tried_to_allocate_bytes, "146.250MiB"),
        (figures.total_capacity_bytes, "3.810GiB"),
        (figures.allocated_by_pytorch_bytes, "960.548MiB"),
        (figures.reserved_total_bytes, "2.688GiB"),
    ] {
        assert_eq!(read, parse_size(printed), "{printed}");
    }
}

#[test]
fn pytorchs_old_message_cut_to_its_figures_is_a_gpu_oom() {
    // Wrapped before its parentheses, the message stays one.
    let wrapped = parse_text(
        "torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 10.00 MiB \n(GPU 0; \
         2.00 GiB total capacity; 1.72 GiB already allocated; 0 bytes free; 1.74 GiB reserved in \
         total by PyTorch) \n",
    );
    assert_eq!(wrapped.len(), 1);
    assert_eq!(wrapped[0].figures.free_bytes, Some(Bytes(0)));
    assert!(wrapped[0].figures.tried_to_allocate_bytes.is_some());
    let cut = first_gpu(
        "i get a message like the one below\n\nGPU 0; 31.75 GiB total capacity; 29.72 GiB already \
         allocated; 381.00 MiB free; 29.94 GiB reserved in total by PyTorch\n",
    )
    .expect("the figures of PyTorch's old message");
    assert_eq!(cut.figures.free_bytes, parse_size("381.00MiB"));
}

#[test]
fn a_kill_told_by_its_exit_code_137() {
    for told in [
        "It hangs for a while and then exits with code 137.\n",
        "The litellm pod OOMKilled (exit 137) within 11s of starting\n",
        "CONTAINER ID   STATUS\n3f2a   Exited (137) 5 seconds ago\n",
    ] {
        let messages = parse_text(told);
        let kill = messages.first().expect(told);
        assert!(!kill.is_gpu_oom, "{told}");
        assert_eq!(kill.details.exit_code, Some(137), "{told}");
    }
    // A port or a count is no exit code.
    assert!(parse_text("listening on port 8137, exit 1370 lines\n").is_empty());
}

#[test]
fn the_killed_worker_is_named() {
    let gunicorn = parse_text(
        "[2024-01-19 00:48:32 +0000] [2973] [ERROR] Worker (pid:2977) was sent SIGKILL! Perhaps \
         out of memory?\n",
    );
    let kill = gunicorn.first().expect("gunicorn's kill");
    assert_eq!(kill.details.killed_pid, Some(2977));
    // The worker a bus error killed, named with the worker's own report of it.
    let bus = parse_text(
        "ERROR: Unexpected bus error encountered in worker. This might be caused by insufficient \
         shared memory (shm).\nRuntimeError: DataLoader worker (pid 4071827) is killed by \
         signal: Bus error. It is possible that dataloader's workers are out of shared memory.\n",
    );
    let shm = bus.first().expect("the worker's bus error");
    assert!(!shm.is_gpu_oom);
}
