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
