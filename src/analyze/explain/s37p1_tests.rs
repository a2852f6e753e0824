//! Whole-text checks of what session 37's blind batches showed missing (helper p1): allocator
//! messages that the CPU back end prints too, engines named by their sites, forms and nodes,
//! serving stages of vLLM and llama-server. Each rule with a close case it must leave
//! alone.

use super::explain_text;
use super::whole_text::{engine, gpu_oom, phase};
use crate::model::explain::{Cause, Phase};
use crate::model::failure::EngineName;
use crate::model::Bytes;

#[test]
fn xlas_cpu_allocator_under_the_cpu_platform_is_host_memory() {
    let text = "JAX_PLATFORMS=cpu python krr.py\n\
                devices [CpuDevice(id=0)]\n\
                jax.errors.JaxRuntimeError: RESOURCE_EXHAUSTED: Out of memory allocating \
                57600000000 bytes.\n";
    let report = explain_text(text);
    assert!(!report.is_gpu_oom);
    assert_eq!(report.engine.name, EngineName::Jax);
    assert_eq!(report.verdict.cause, Cause::HostMemory);
    assert_eq!(
        report.ooms[0].details.host_required_bytes,
        Some(Bytes(57_600_000_000))
    );
    // The same status with no sign of the CPU platform stays a GPU failure (as labelled).
    let bare = "jaxlib.xla_extension.XlaRuntimeError: RESOURCE_EXHAUSTED: Out of memory \
                allocating 20029400304 bytes.\n";
    assert!(gpu_oom(bare));
    // CuPy's message of the same head, under a CPU sign, is the GPU's pool.
    let cupy = "JAX_PLATFORMS=cpu\n\
                cupy.cuda.memory.OutOfMemoryError: Out of memory allocating 1,073,741,824 \
                bytes (allocated so far: 2,147,483,648 bytes).\n";
    assert!(gpu_oom(cupy));
}

#[test]
fn onnxruntimes_arena_in_a_cpu_only_session_is_host_memory() {
    let text = "session providers: ['CPUExecutionProvider']\n\
                batch 32768: mean score +0.2481\n\
                onnxruntime.capi.onnxruntime_pybind11_state.Fail: [ONNXRuntimeError] : 1 : FAIL : \
                Non-zero status code returned while running MatMul node. Name:'/fc1/MatMul' Status \
                Message: /onnxruntime_src/onnxruntime/core/framework/bfc_arena.cc:360 void* \
                onnxruntime::BFCArena::AllocateRawInternal(size_t, bool, onnxruntime::Stream*) \
                Failed to allocate memory for requested buffer of size 34359738368\n";
    let report = explain_text(text);
    assert!(!report.is_gpu_oom);
    assert_eq!(report.verdict.cause, Cause::HostMemory);
    // The CUDA provider in the session: its arena is the GPU's.
    let cuda = text.replace(
        "['CPUExecutionProvider']",
        "['CUDAExecutionProvider', 'CPUExecutionProvider']",
    );
    assert!(gpu_oom(&cuda));
    // The Python API's warning that the CUDA provider is missing: the session runs on the CPU.
    let warned = text.replace(
        "session providers: ['CPUExecutionProvider']",
        "UserWarning: Specified provider 'CUDAExecutionProvider' is not in available provider \
         names.Available providers: 'AzureExecutionProvider, CPUExecutionProvider'",
    );
    assert!(!gpu_oom(&warned));
}

#[test]
fn vllms_sites_comfyuis_form_and_node_names_name_the_engine() {
    let oom = "CUDA out of memory\n";
    let vllm = format!(
        "- [x] Make sure you already searched for relevant issues, and asked the chatbot living \
         at the bottom right corner of the [documentation page](https://docs.vllm.ai/en/latest/)\n{oom}"
    );
    assert_eq!(engine(&vllm), EngineName::Vllm);
    // Another host whose name ends the same is not vLLM's site.
    let other = format!("see https://mydocs.vllm.ai.example.org/\n{oom}");
    assert_ne!(engine(&other), EngineName::Vllm);
    let form = format!("### Custom Node Testing\n\n### Your question\n\n{oom}");
    assert_eq!(engine(&form), EngineName::Comfyui);
    // The words inside a sentence are not the form's heading.
    let sentence = format!("We skipped custom node testing this time.\n{oom}");
    assert_ne!(engine(&sentence), EngineName::Comfyui);
    let node = format!("at the end got oom on Vae Decode node ...\n{oom}");
    assert_eq!(engine(&node), EngineName::Comfyui);
    // `vae_decode node` names no ComfyUI node.
    let code = format!("the vae_decode node of my graph\n{oom}");
    assert_ne!(engine(&code), EngineName::Comfyui);
}

#[test]
fn vllms_kv_cache_padding_line_plans_the_kv_cache() {
    let text = "Watching docker logs, looks like a OOM before 600.\n\
        (EngineCore pid=43) INFO 07-13 00:04:08 [gpu_model_runner.py:6483] Profiling CUDA graph memory: PIECEWISE=4 (largest=8)\n\
        (EngineCore pid=43) INFO 07-13 00:04:10 [gpu_worker.py:508] Available KV cache memory: 3.93 GiB\n\
        (EngineCore pid=43) WARNING 07-13 00:04:10 [kv_cache_utils.py:1208] Add 3 padding layers, may waste at most 6.25% KV cache memory\n\
        (EngineCore pid=43) ERROR 07-13 00:04:10 [co\n";
    assert_eq!(phase(text), Phase::KvCacheAlloc);
    // The same line for the minimal profiling cache, before the CUDA graph memory is
    // profiled: profiling is what runs.
    let profiling = "Watching docker logs, looks like a OOM before 600.\n\
        (EngineCore pid=168) WARNING 05-14 08:25:39 [kv_cache_utils.py:1152] Add 3 padding layers, may waste at most 10.00% KV cache memory\n\
        (EngineCore pid=168) INFO 05-14 08:25:39 [gpu_model_runner.py:5963] Profiling CUDA graph memory: PIECEWISE=1 (largest=8)\n\
        (EngineCore pid=168) ERROR 05-14 08:25:40 [co\n";
    assert_ne!(phase(profiling), Phase::KvCacheAlloc);
}

#[test]
fn llama_servers_slot_selection_is_a_request() {
    let text = "May 20 10:39:38 host llama-server[611178]: 52.40.112.095 I slot get_availabl: id  1 | task -1 | selected slot by LCP similarity, sim_best = 0.429 (> 0.100 thold), f_keep = 0.359\n\
                May 20 10:39:38 host llama-server[611178]: CUDA error: out of memory\n";
    assert_eq!(phase(text), Phase::Inference);
    // The idle loop's line shows no request.
    let idle = "May 20 10:34:55 host llama-server[611178]: 47.57.857.136 I srv  update_slots: all slots are idle\n\
                May 20 10:39:38 host llama-server[611178]: CUDA error: out of memory\n";
    assert_ne!(phase(idle), Phase::Inference);
}
