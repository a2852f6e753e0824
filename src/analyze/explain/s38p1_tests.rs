//! Whole-text checks of what session 38's blind batches showed missing (helper p1): GPU
//! allocation failures of runtimes outside PyTorch (ggml's Vulkan backend, MLX, tinygrad,
//! Triton Inference Server's CNMeM pool, boost.compute's OpenCL, Faiss), and the host's
//! look-alikes (LLVM's allocation failure, zsh's report of a killed job). Each rule with a close
//! case it must leave alone.

use super::explain_text;
use super::whole_text::gpu_oom;
use crate::model::gpu::CudaOrdinal;
use crate::model::Bytes;

/// The first GPU-OOM message's request and device.
fn request(text: &str) -> (Option<Bytes>, Option<CudaOrdinal>) {
    let report = explain_text(text);
    assert!(report.is_gpu_oom, "not read as a GPU OOM: {text}");
    let oom = report.oom.expect("figures");
    (oom.tried_to_allocate_bytes, oom.gpu_index)
}

#[test]
fn ggml_vulkans_newer_allocation_failure_is_the_devices() {
    let text = "main: loading model\n\
                Failed to load llama-server: llamacpp error: Error: ggml_vulkan: Memory \
                allocation of size 638668800 failed.\n";
    assert_eq!(request(text).0, Some(Bytes(638_668_800)));
    // The older wording is still read.
    let older = "ggml_vulkan: Device memory allocation of size 1073741824 failed.\n";
    assert_eq!(request(older).0, Some(Bytes(1_073_741_824)));
    // Another program's `Memory allocation of size` is not ggml's.
    assert!(!gpu_oom(
        "Memory allocation of size 4096 failed in the arena.\n"
    ));
}

#[test]
fn mlxs_allocator_failures_are_the_apple_gpus() {
    let text = "libc++abi: terminating due to uncaught exception of type std::runtime_error: \
                [malloc_or_wait] Unable to allocate 134217728 bytes.\n";
    assert_eq!(request(text).0, Some(Bytes(134_217_728)));
    // Metal's count of live buffers: a refused GPU allocation, no byte figure.
    let limit = "Error in iterating prediction stream: RuntimeError: [metal::malloc] Resource \
                 limit (499000) exceeded.\n";
    assert!(gpu_oom(limit));
    // A resource limit of another program is not MLX's.
    assert!(!gpu_oom(
        "[malloc] Resource limit reached for the worker pool.\n"
    ));
}

#[test]
fn tinygrads_kfd_allocation_is_the_gpus_though_its_class_is_memory_error() {
    let text = "  File \"tinygrad/runtime/ops_amd.py\", line 584, in alloc\n\
                MemoryError: Cannot allocate 122341986304 bytes: no memory is available.\n";
    assert_eq!(request(text).0, Some(Bytes(122_341_986_304)));
    // Python's bare MemoryError, or another allocator's `Cannot allocate N bytes`, stays the
    // host's.
    assert!(!gpu_oom("MemoryError: Cannot allocate 4096 bytes\n"));
    assert!(!gpu_oom("MemoryError\n"));
}

#[test]
fn tritons_cnmem_pool_names_the_request_and_the_gpu() {
    let text = "W0410 13:51:44.743979 1 memory.cc:212] Failed to allocate CUDA memory with byte \
                size 102236160 on GPU 0: CNMEM_STATUS_OUT_OF_MEMORY, falling back to pinned \
                system memory\n";
    assert_eq!(
        request(text),
        (Some(Bytes(102_236_160)), Some(CudaOrdinal(0)))
    );
    // Another CNMeM status is no shortage.
    assert!(!gpu_oom(
        "Failed to allocate CUDA memory with byte size 1024 on GPU 1: CNMEM_STATUS_CUDA_ERROR\n"
    ));
}

#[test]
fn boost_computes_opencl_allocation_failure_is_the_devices() {
    let text = "terminate called after throwing an instance of \
                'boost::wrapexcept<boost::compute::opencl_error>'\n  \
                what():  Memory Object Allocation Failure\n";
    assert!(gpu_oom(text));
    // Its host twin is not.
    let host = "terminate called after throwing an instance of \
                'boost::wrapexcept<boost::compute::opencl_error>'\n  \
                what():  Out of Host Memory\n";
    assert!(!gpu_oom(host));
}

#[test]
fn faiss_names_the_request_and_the_device() {
    let text = "Faiss assertion 'cudaMalloc(p, size) == cudaSuccess' failed in void \
                faiss::gpu::allocMemorySpace(faiss::gpu::MemorySpace, void**, size_t) at \
                utils/MemorySpace.cpp:20; details: Failed to cudaMalloc 16000000000 bytes\n\
                Aborted\n";
    assert_eq!(request(text).0, Some(Bytes(16_000_000_000)));
    let wrapped = "RuntimeError: Error in virtual void* \
                   faiss::gpu::StandardGpuResourcesImpl::allocMemory(const \
                   faiss::gpu::AllocRequest&)\n              \
                   Error: 'err == cudaSuccess' failed: StandardGpuResources: alloc fail type \
                   TemporaryMemoryBuffer \n              \
                   dev 0 space Device \tstream 0x7f7b46ba9a60 size 1610612736 bytes (cudaMalloc \
                   error out of memory [2])\n";
    assert_eq!(
        request(wrapped),
        (Some(Bytes(1_610_612_736)), Some(CudaOrdinal(0)))
    );
    // Its logged retry of a temporary allocation is no failure, nor another cudaMalloc status.
    assert!(!gpu_oom(
        "StandardGpuResources: alloc fail type TemporaryMemoryBuffer dev 0 space Temporary \
         stream 0x1 size 4096 bytes (no temp space); retrying as MemorySpace::Device\n"
    ));
    assert!(!gpu_oom(
        "failed to cudaMalloc 4096 bytes (error 700 an illegal memory access was encountered)\n"
    ));
}

#[test]
fn llvms_allocation_failure_is_the_hosts() {
    let text = "[LightGBM] [Info] Compiling OpenCL Kernel with 64 bins...\n\
                LLVM ERROR: out of memory\n\
                *** Aborted\n";
    let report = explain_text(text);
    assert!(!report.is_gpu_oom);
    assert!(!report.ooms.is_empty());
    // Another LLVM error is not a memory failure, and a GPU's own OOM after a compile stays one.
    assert!(!gpu_oom(
        "LLVM ERROR: Cannot select: intrinsic %llvm.nvvm.ldg\n"
    ));
    assert!(gpu_oom(
        "Compiling kernels...\nRuntimeError: CUDA error: out of memory\n"
    ));
}

#[test]
fn zshs_report_of_a_killed_job_names_its_pid() {
    let text = "Loading checkpoint shards:  88%|█████▊  | 7/8 [00:12<00:01,  1.84s/it][1]    \
                14875 killed     python main.py --low_vram\n";
    let report = explain_text(text);
    assert!(!report.is_gpu_oom);
    assert_eq!(report.ooms[0].details.killed_pid, Some(14_875));
    let plus = explain_text("[2]  + 26478 killed     python test.py\n");
    assert_eq!(plus.ooms[0].details.killed_pid, Some(26_478));
    // zsh's foreground report has no pid, still the host's kill.
    let foreground = explain_text("zsh: killed     python3 train.py\n");
    assert!(!foreground.is_gpu_oom);
    assert!(!foreground.ooms.is_empty());
    // `killed` in prose is not the shell's report.
    let prose = explain_text("the job [1] was 3 killed processes ago\n");
    assert!(prose
        .ooms
        .iter()
        .all(|oom| oom.details.killed_pid.is_none()));
}
