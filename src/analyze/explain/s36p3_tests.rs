//! Whole-text checks of what session 36's blind batches d/e (self-hosted serving stacks,
//! Russian threads) showed missing: short excerpts of the texts, and the cases each rule must
//! leave alone.

use super::explain_text;
use super::whole_text::{gpu_oom, phase};
use crate::model::explain::{Cause, Phase};
use crate::model::gpu::CudaOrdinal;
use crate::model::Bytes;

#[test]
fn hami_cores_device_limit_refusal_is_a_gpu_oom_with_its_figures() {
    let text = "[HAMI-core ERROR (pid:1 thread=140160828682240 allocator.c:60)]: Device 1 OOM \
                25769803776 / 24146608128\n";
    let report = explain_text(text);
    assert!(report.is_gpu_oom);
    let oom = report.oom.expect("figures");
    assert_eq!(oom.gpu_index, Some(CudaOrdinal(1)));
    assert_eq!(oom.total_capacity_bytes, Some(Bytes(24_146_608_128)));
    // A real usage above the limit is a shortage, not an overflow.
    assert_ne!(report.verdict.cause, Cause::SizeOverflow);
    // Its usage counter wrapped to just under 2^64: an overflow.
    let wrapped = "[HAMI-core ERROR (pid:1 thread=1 allocator.c:53)]: Device 0 OOM \
                   18446744073707737660 / 24146608128\n";
    assert_eq!(explain_text(wrapped).verdict.cause, Cause::SizeOverflow);
    // HAMi-core's debug line of the current usage is no refusal.
    let debug = "[HAMI-core Debug(1:140160828682240:memory.c:509)]: Device 0 current memory \
                 1048576 / 24146608128\n";
    assert!(!gpu_oom(debug));
}

#[test]
fn transformers_finished_shard_download_starts_the_weights_load() {
    let text = "Downloading shards: 100%|██████████| 2/2 [01:57<00:00, 58.91s/it]\nKilled\n";
    assert_eq!(phase(text), Phase::WeightsLoad);
    // A download still under way loads nothing yet.
    let partial = "Downloading shards:  50%|█████     | 1/2 [01:27<01:27, 87.0s/it]\nKilled\n";
    assert_ne!(phase(partial), Phase::WeightsLoad);
}

#[test]
fn ipex_llms_low_bit_parameter_move_is_the_weights_load() {
    let text = "  File \"/venv/lib/python3.11/site-packages/ipex_llm/transformers/low_bit_linear.py\", \
                line 492, in to\n    new_param = FP4Params(super().to(device=device,\n\
                RuntimeError: Native API failed. Native API returns: -5 (PI_ERROR_OUT_OF_RESOURCES) \
                -5 (PI_ERROR_OUT_OF_RESOURCES)\n";
    assert_eq!(phase(text), Phase::WeightsLoad);
    // Another library's `to` is not ipex-llm's parameter move.
    let other = "  File \"/venv/lib/python3.11/site-packages/mylib/low_bit.py\", line 10, in to\n\
                 RuntimeError: Native API failed. Native API returns: -5 \
                 (PI_ERROR_OUT_OF_RESOURCES) -5 (PI_ERROR_OUT_OF_RESOURCES)\n";
    assert_ne!(phase(other), Phase::WeightsLoad);
}

#[test]
fn russian_memory_shortage_beside_gpu_work_is_a_gpu_oom() {
    let title = "# нехватка памяти\n\nНет. Вашей видеокарты не хватает для нормальной работы.\n";
    assert!(gpu_oom(title));
    let sentence = "Недавно при попытке файнтюнить GPT3XL столкнулся с ошибкой нехватки памяти. \
                    Попытался в конфиге deepspeed включить режим cpu_offload.\n";
    assert!(gpu_oom(sentence));
    assert!(gpu_oom("При обучении на CUDA закончилась память.\n"));
    // The host's memory (RAM, ОЗУ) is not the GPU's, and nothing shows GPU work here.
    assert!(!gpu_oom(
        "Не хватает оперативной памяти при обучении на видеокарте.\n"
    ));
    assert!(!gpu_oom("Скрипт упал: недостаточно памяти.\n"));
}
