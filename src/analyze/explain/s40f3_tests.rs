//! Whole-text checks of session 40 (f3)'s engine rules (blind batches s40a–d): TVM's runtime
//! error names MLC-LLM only when nothing else names an engine; JAX's pip extras, DeepSpeed's
//! launcher and MLX named; and the close lines each rule must leave alone.

use super::whole_text::{engine, TORCH_OOM};
use crate::model::failure::EngineName;

#[test]
fn a_tvm_runtime_error_is_mlc_llms_only_when_nothing_else_names_an_engine() {
    // SGLang's kernels called through TVM-FFI raise TVM's error class.
    let sglang = "Serving on 4 B300s with the official image `lmsysorg/sglang:latest`, every TP rank dies:\n\
        [2026-09-03 10:00:00 TP1] Scheduler hit an exception: Traceback (most recent call last):\n\
        \x20 File \"/sgl-workspace/sglang/python/sglang/srt/managers/scheduler.py\", line 2800, in run_scheduler_process\n\
        \x20   logits = deep_gemm.fp8_mqa_logits(\n\
        tvm.error.InternalError: CUDA out of memory. Tried to allocate 73.65 GiB. GPU 1 ... 50.40 GiB is free.\n";
    assert_eq!(engine(sglang), EngineName::Sglang);
    // The same error with nothing else named stays MLC-LLM's.
    let alone = "tvm.error.InternalError: CUDA out of memory. Tried to allocate 2.00 GiB.\n";
    assert_eq!(engine(alone), EngineName::MlcLlm);
}

#[test]
fn jax_installed_by_its_pip_extras_names_jax() {
    let text = "I installed `jax[rocm]` on a 128GB Ryzen AI MAX+ 395 and I was getting OOMed.\n\
        jaxlib.xla_extension.XlaRuntimeError: RESOURCE_EXHAUSTED: Out of memory while trying to allocate 8589934592 bytes.\n";
    assert_eq!(engine(text), EngineName::Jax);
    let cuda = "pip install -U \"jax[cuda12]\"\nRuntimeError: CUDA error: out of memory\n";
    assert_eq!(engine(cuda), EngineName::Jax);
    // A package of another name ending in `jax` (`numpyro[…]`, `myjax[gpu]`) is not JAX's.
    let other = "pip install \"myjax[gpu]\"\nRuntimeError: CUDA error: out of memory\n";
    assert_ne!(engine(other), EngineName::Jax);
}

#[test]
fn deepspeeds_launcher_command_names_deepspeed() {
    let text = format!(
        "deepspeed --num_gpus 8 --num_nodes 2 --hostfile hostfile src/train.py \\\n\
        --finetuning_type lora \\\n--per_device_train_batch_size 1\n{TORCH_OOM}"
    );
    assert_eq!(engine(&text), EngineName::Deepspeed);
    let script =
        format!("CUDA_VISIBLE_DEVICES=0,1 deepspeed train.py --deepspeed ds.json\n{TORCH_OOM}");
    assert_eq!(engine(&script), EngineName::Deepspeed);
    // The word in a sentence, or the Trainer's `--deepspeed` flag alone, is no launcher.
    let flag =
        format!("python train.py --deepspeed ds_config.json --finetuning_type lora\n{TORCH_OOM}");
    assert_eq!(engine(&flag), EngineName::Transformers);
}

#[test]
fn mlx_named_makes_another_program_over_transformers_idioms() {
    let text = "If I put an input of 17,000 tokens into `model.generate(x, temperature)` I get\n\
        libc++abi: terminating due to uncaught exception of type std::runtime_error: [metal::malloc] Attempting to allocate 19081554496 bytes which is greater than the maximum allowed buffer size of 17179869184 bytes.\n\
        I guess the context is too long, at least when using MLX.\n";
    assert_eq!(engine(text), EngineName::Other);
    // MLX compared with another program on the same line names neither.
    let compared = "outputs = model.generate(**inputs)\n\
        MLX is faster than transformers on my Mac\n\
        RuntimeError: MPS backend out of memory (MPS allocated: 17.00 GB, other allocations: 1.00 GB, max allowed: 18.13 GB). Tried to allocate 1.00 GB on private pool.\n";
    assert_eq!(engine(compared), EngineName::Transformers);
}
