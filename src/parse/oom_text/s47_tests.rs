//! Unit tests of wordings added in session 47: the RAPIDS Accelerator for Apache Spark's retry
//! exceptions (the GPU's and the host's), a title's `memory` mistyped or in capitals, and
//! Adreno's graphics driver refusing the GPU's memory on Android.

use super::*;
use crate::model::failure::OomMessage;

fn first(text: &str) -> Option<OomMessage> {
    parse_text(text).into_iter().next()
}

#[test]
fn spark_rapids_retry_exceptions_name_whose_memory() {
    for gpu in [
        "com.nvidia.spark.rapids.jni.SplitAndRetryOOM: GPU OutOfMemory: could not split inputs \
         and retry\n",
        "Caused by: com.nvidia.spark.rapids.jni.GpuRetryOOM: GPU OutOfMemory\n",
        "(10.59.128.149 executor 2): com.nvidia.spark.rapids.jni.SplitAndRetryOOM: Attempted to \
         handle a split, but was not initialized with a splitPolicy.\n",
    ] {
        let message = first(gpu).expect(gpu);
        assert!(message.is_gpu_oom, "{gpu}");
    }
    let host = first(
        "java.lang.RuntimeException: com.nvidia.spark.rapids.jni.CpuRetryOOM: CPU OutOfMemory\n",
    )
    .expect("the host's retry exception");
    assert!(!host.is_gpu_oom);
    // Another program's class of the same name is not Spark's.
    assert!(parse_text("class RetryOOMPolicy loaded\n")
        .iter()
        .all(|message| !message.is_gpu_oom));
}

#[test]
fn a_titles_mistyped_or_capital_memory_is_a_mention() {
    for title in [
        "# CUDA Out of Memeory Issue\n",
        "# GPU-OUT of memory\n",
        "I keep getting cuda out of memeory ... what is the GPU doing\n",
    ] {
        let message = first(title).expect(title);
        assert!(message.is_gpu_oom, "{title}");
    }
}

#[test]
fn adrenos_driver_refusing_gpu_memory_is_a_gpu_oom() {
    let logcat = "W/Adreno-GSL: <sharedmem_gpuobj_alloc:2339>: sharedmem_gpumem_alloc: mmap \
                  failed errno 12 Out of memory\nE/Adreno-GSL: <gsl_memory_alloc_pure:2209>: GSL \
                  MEM ERROR: kgsl_sharedmem_alloc ioctl failed.\n";
    let message = first(logcat).expect("Adreno's allocation failure");
    assert!(message.is_gpu_oom);
}

#[test]
fn directml_dask_cuda_and_milvus_wordings() {
    for (text, request) in [
        (
            "# [Issue]: \"RuntimeError: Could not allocate tensor with XXXXXXXX bytes\"\n",
            None,
        ),
        (
            "RuntimeError: Could not allocate tensor with 4719616 bytes.\n",
            None,
        ),
        (
            "distributed.worker - WARNING - RMM allocation of 605.37 MiB failed, spill-on-demand \
             couldn't find any device memory to spill: <ProxyManager dev_limit=13.97 GiB \
             host_limit=1.41 TiB disk=0 B(0) host=3.84 GiB(1) dev=0 B(0)>\n",
            Some(634_776_453),
        ),
        (
            "2020-03-18:02:42:10,608 ERROR    [client.py:71] out of memory: CPU2GPU:1\n",
            None,
        ),
    ] {
        let message = first(text).expect(text);
        assert!(message.is_gpu_oom, "{text}");
        if let Some(bytes) = request {
            assert_eq!(
                message.figures.tried_to_allocate_bytes,
                Some(Bytes(bytes)),
                "{text}"
            );
        }
    }
    // `CUDA out-of-memory` hyphenated in a sentence is a mention too.
    let said = first(
        "If I run retrieval on a machine with a GPU, the index goes to the GPU, which results in \
         a CUDA out-of-memory error.\n",
    )
    .expect("a hyphenated mention");
    assert!(said.is_gpu_oom);
}
