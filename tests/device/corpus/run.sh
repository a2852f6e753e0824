#!/usr/bin/env bash
# Device run that makes the real failure texts of tests/fixtures/corpus/h200/: each scenario of
# gen.py (transformers, accelerate, PEFT, Lightning, torch.compile, CUDA graphs, cuBLAS, CUDA
# context, JAX, plain PyTorch allocator modes, and failures that are not GPU OOMs) runs as its own
# python3 process under a time limit; its whole stdout+stderr, as a user sees it, goes to
# $OUT/<name>.txt. A scenario that does not fail as planned (no error, a timeout, another error)
# leaves $OUT/<name>.note instead (the reason, then its output) and the others go on.
# Also writes $OUT/machine.txt (nvidia-smi, versions) and $OUT/summary.txt. Builds nothing and
# does not need the oomdoc binary. About 10 minutes on one H200.
# Usage: bash tests/device/corpus/run.sh [SCENARIO ...]   (default: all; env SCENARIO_TIMEOUT, 60 s)
set -uo pipefail
cd "$(dirname "$0")/../../.."
OUT=${OUT:-$(mktemp -d)}
HERE=tests/device/corpus
export PYTHONUNBUFFERED=1 HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 HF_DATASETS_OFFLINE=1
export HF_HUB_DISABLE_TELEMETRY=1 TOKENIZERS_PARALLELISM=false
export OOMDOC_CORPUS_CKPT=${OOMDOC_CORPUS_CKPT:-/tmp/oomdoc-corpus/llama-550m}
summary="$OUT/summary.txt"
: > "$summary"
holder=
ready="$OUT/.holder.ready"

stop_holder() {
  if [ -n "$holder" ]; then
    kill "$holder" 2> /dev/null
    wait "$holder" 2> /dev/null
    holder=
    # wait until the driver has taken the memory back
    for _ in $(seq 1 40); do
      used=$(nvidia-smi --query-gpu=memory.used --format=csv,noheader,nounits 2> /dev/null | head -n1)
      [ -n "$used" ] && [ "$used" -lt 4096 ] && break
      sleep 0.25
    done
  fi
  rm -f "$ready"
}
trap 'stop_holder' EXIT
trap 'stop_holder; exit 143' TERM INT

start_holder() { # LEAVE_GIB: another process holds all of the card but this
  rm -f "$ready"
  python3 "$HERE/gen.py" _hold "$1" "$ready" > "$OUT/.holder.log" 2>&1 &
  holder=$!
  for _ in $(seq 1 240); do
    [ -s "$ready" ] && { echo "  holder: $(cat "$ready")"; return 0; }
    kill -0 "$holder" 2> /dev/null || break
    sleep 0.25
  done
  echo "  holder did not get ready: $(tail -n 3 "$OUT/.holder.log")"
  return 1
}

{
  echo "== date"; date -u
  echo "== uname"; uname -a
  echo "== whoami / pwd"; whoami; pwd
  echo "== nvidia-smi"; nvidia-smi
  echo "== nvidia-smi query"
  nvidia-smi --query-gpu=name,driver_version,memory.total,persistence_mode,compute_mode,mig.mode.current --format=csv
  echo "== versions"
  XLA_PYTHON_CLIENT_PREALLOCATE=false python3 - <<'PY'
import importlib, platform, sys
print("python", platform.python_version(), sys.executable)
for name in ["torch", "transformers", "accelerate", "peft", "lightning", "pytorch_lightning",
             "jax", "jaxlib", "numpy", "triton", "tqdm", "safetensors"]:
    try:
        module = importlib.import_module(name)
        print(name, getattr(module, "__version__", "?"))
    except Exception as error:
        print(name, "not importable:", error)
import torch
print("torch.version.cuda", torch.version.cuda, "cudnn", torch.backends.cudnn.version())
print("device", torch.cuda.get_device_name(0), torch.cuda.get_device_properties(0).total_memory, "bytes")
print("mem_get_info", torch.cuda.mem_get_info())
try:
    import jax
    print("jax devices", jax.devices())
except Exception as error:
    print("jax devices failed:", error)
PY
} > "$OUT/machine.txt" 2>&1
echo "machine: $(grep -E '^(torch|transformers|jax|device) ' "$OUT/machine.txt" | tr '\n' ';')" | tee -a "$summary"

start=$(date +%s)
# The random-weight checkpoint, for the transformers / accelerate / PEFT scenarios only.
if [ $# -eq 0 ] || [[ " $* " =~ \ (hf_|accelerate_|peft_|safetensors_|fsdp_|generate_in|trainer_|s13_(dpo|eager|peft|kv|hf|bnb|perplexity)_|s14_(hf|accelerate|peft|decode)_|s15_(hf|peft|accelerate)_|s16_(hf|peft|accelerate)_|s17_(hf|peft|accelerate)_|s19_(hf|peft|accelerate)_|s20_(hf|accelerate)_|s21_(hf|peft|accelerate)_|s22_(hf|peft|accelerate)_|s22e_(hf|peft|accelerate)_|s23_(hf|peft|accelerate)_|s24_(hf|peft|accelerate)_|s25_(hf|peft|accelerate)_|s26_(hf|peft|accelerate)_|s26b_(hf|peft|accelerate)_|s26c_(hf|peft|accelerate)_|s26d_(hf|peft|accelerate)_|s27b_(hf|peft|accelerate)_|s27c_(hf|peft|accelerate)_|s28_hf_|s37_(hf|peft|accelerate)_|s39_(hf|peft|accelerate)_) ]]; then
  python3 "$HERE/gen.py" _setup > "$OUT/setup.log" 2>&1
  echo "setup: exit $? in $(( $(date +%s) - start )) s: $(tail -n 1 "$OUT/setup.log")" | tee -a "$summary"
fi

# run_one NAME REGEX HOLD [VAR=VALUE ...]
#   REGEX: what the text must show to count as reproduced (grep -E)
#   HOLD:  - for none, else the GiB another process leaves free while NAME runs
run_one() {
  local name=$1 regex=$2 hold=$3; shift 3
  if [ ${#only[@]} -gt 0 ] && [[ ! " ${only[*]} " == *" $name "* ]]; then return; fi
  local limit=${SCENARIO_TIMEOUT:-60} text="$OUT/$name.out" started rc reason=
  case $name in torch_compile|compiled_evaluate|compile_reduce_overhead|compile_dynamic_rerank|\
    compile_autotune_serve|trainer_resume_optimizer|compiled_optimizer_step|\
    seq2seq_predict_generate|lightning_ddp_one_device|torchrun_tee_prefix|dataloader_shm_bus|\
    hf_generate_long_decode|trainer_save_callback|peft_load_adapter|nccl_duplicate_gpu|\
    s13_lightning_batch_finder_curriculum|s13_dpo_reference_forward|s13_hf_offload_folder|\
    s13_conv3d_benchmark_volume|s13_mp_spawn_worker|s14_compile_first_call|\
    s14_peft_multi_adapter_server|s14_hf_generate_output_scores|s14_pandas_get_dummies_memoryerror|\
    s15_hf_sharded_fp32_load|s15_fabric_backward|s15_lightning_configure_model|\
    s15_retrieval_topk_scores|s15_dist_init_card_full|s15_dist_nccl_gather_logits|\
    s15_subprocess_last_line|s16_hf_trainer_predict_seqcls|s16_peft_svd_weighted_adapter|\
    s16_lightning_long_sample_batch|s16_torch_load_default_device|s16_jax_pca_svd|\
    s17_hf_compile_loaded_model|s17_compile_recompile_card_full|s17_torchrun_record_summary|\
    s17_peft_lora_train_sampling_pass|s17_lightning_sample_callback|\
    s17_hf_gptq_calibration_hooks|s17_dataloader_too_many_open_files|\
    s20_accelerate_launch_lora_merge|s20_torchrun_ddp_no_record|s20_hf_trainer_logging_long_doc|\
    s20_hf_ipython_generate_beams|s21_zero_redundancy_adamw|s21_hf_bert_mlm_trainer|\
    s21_peft_gc_logits_to_keep|s21_lightning_simple_profiler_fp16|s21_lightning_transfer_batch_mask|\
    s21_profiler_memory_table|s21_benchmark_attention_sweep|s21_memory_history_snapshot|\
    s21_accelerate_notebook_launcher|s22_hf_pytest_prefill_batches|s22_lightning_fsdp_one_device|\
    s22_numpyro_predictive_draws|s22_mp_queue_cuda_ipc_writer|s22_pyg_gat_full_batch|\
    s22_gpytorch_grid_predict|s22e_hf_beam_scores_backtranslate|s22e_hf_trainer_eval_logits_midtrain|\
    s22e_compile_max_autotune_ffn|s22e_ddp_nccl_first_backward|s22e_lightning_prediction_writer_buffer|\
    s23_lightning_ddp_spawn_oom|s23_dataloader_worker_cuda_augment|s23_diffrax_saveat_steps|\
    s23_hf_save_pretrained_disk_full|s23_optax_lbfgs_deblur|s24_lightning_load_ckpt_map_location|\
    s24_hf_batch_summarize_outlier|s24_hf_grpo_group_logprobs|s24_tokenize_corpus_job|\
    s24_compile_shared_node_tmp|s24_timm_vit_periodic_eval|s25_width_lr_sweep|\
    s25_jax_pm_nbody|s25_hf_logit_lens_probe|s25_events_parquet_merge|\
    s25_embedding_feature_job|s25_lightning_landcover_tiles|s26_hf_loglik_harness|\
    s26_peft_notebook_lora_backward|s26_lightning_moco_queue_growth|s26_jax_score_sampler|\
    s26_host_torchrun_tokens_cgroup|s26_accelerate_first_optimizer_step|s26_vit_autobatch_then_adamw|\
    s26b_hf_trainer_evaluate_only|s26b_peft_merge_save_verify|s26b_lightning_h5_setup_cgroup|\
    s26b_pool_worker_reraise_message|s26b_ddp_single_process_wrap|s26b_flax_pmap_train_step|\
    s26c_jax_keras_fit_progressive|s26c_lightning_validate_retrieval|s26c_hf_pipeline_chunk_loop|\
    s26c_compile_first_call_larger_shape|s26c_peft_kbit_prepare_first_step|s26c_hf_kd_distill_logged_error|\
    s26d_hf_trainer_predict_lm_logits|s26d_hf_beam8_batch_summaries|s26d_hf_resume_torch_load_cuda|\
    s27_tv_retinanet_dense_gt_train|s27_video_cv2_sliding_clips|s27_lightning_summary_example_input|\
    s27_joblib_loky_trials|s27b_peft_dpo_disable_adapter_ref|s27b_accelerate_clm_no_trainer_grouped|\
    s27b_flax_lm_remat_off|s27b_tv_deeplab_multiscale_tta|s27b_gloo_allgather_uneven_shards|\
    s27c_hf_generate_pool_worker|s27c_peft_ipython_lora_step|s27c_compile_warmup_rich|\
    s27c_hf_full_ft_warnings|s27c_elastic_launcher_summary|s27c_gloo_ddp_timeout_rank0_eval|\
    s28_compile_reduce_overhead_buckets|s28_jax_pytest_fft_sizes|s28_jax_unrolled_jit_on_demand|\
    s28_kubectl_timestamps_train|s28_repl_console_session|\
    s37_lightning_swa_average_to_cuda|s37_aoti_package_runner_batch|s37_compile_torch_logs_recompiles|\
    s37_compile_cudagraph_record_kept_outputs|s37_accelerate_load_state_nohup|s37_jax_orbax_restore_on_card|\
    s37_pytest_xdist_context_card_held|s37_hf_compose_fp32_load_killed|s37_peft_loha_delta_weight_train|\
    s39_lightning_compiled_module_fit|s39_resume_torch_load_imagenet_style|s39_accelerate_launch_host_cgroup_killed|\
    s39_hf_textstreamer_eager_long_doc|s39_hf_trainer_memwatch_callback|s39_peft_prompt_tuning_virtual_tokens)
    limit=$(( limit * 2 ));;
  esac
  echo "## $name"
  if [ "$hold" != "-" ]; then
    start_holder "$hold" || reason="the holder process did not start"
  fi
  started=$(date +%s)
  if [ -z "$reason" ]; then
    env "$@" timeout -k 5 "$limit" python3 "$HERE/gen.py" "$name" > "$text" 2>&1
    rc=$?
  else
    rc=-1; cp "$OUT/.holder.log" "$text" 2> /dev/null || : > "$text"
  fi
  stop_holder
  local secs=$(( $(date +%s) - started ))
  if [ -z "$reason" ]; then
    # 137 before the limit is the scenario's own SIGKILL (an OOM killer, a guard), not a timeout
    if { [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ]; } && [ "$secs" -ge "$limit" ]; then
      reason="timed out after $limit s"
    elif [ "$rc" -eq 0 ] || [ "$rc" -eq 3 ]; then reason="finished without an error (exit $rc)"
    elif ! grep -Eq "$regex" "$text"; then reason="failed (exit $rc) but the text lacks /$regex/"
    fi
  fi
  if [ -z "$reason" ]; then
    mv "$text" "$OUT/$name.txt"
    echo "$name: TEXT exit $rc in $secs s: $(grep -E -m1 -o "$regex.{0,80}" "$OUT/$name.txt")" | tee -a "$summary"
  else
    { echo "NOTE: $name did not reproduce: $reason"; echo "env: $*"; echo "----- output"; cat "$text"; } > "$OUT/$name.note"
    rm -f "$text"
    echo "$name: NOTE $reason ($secs s)" | tee -a "$summary"
  fi
}

only=("$@")
OOM='OutOfMemoryError|CUDA out of memory|CUDA error: out of memory|out of memory'
run_one hf_from_pretrained "$OOM" -
run_one hf_generate "$OOM" -
run_one hf_trainer "$OOM" -
run_one hf_half "$OOM" -
run_one hf_to_cuda "$OOM" -
run_one accelerate_load_checkpoint_and_dispatch "$OOM" -
run_one peft_lora "$OOM" -
run_one lightning_fit "$OOM" -
run_one cuda_graph_capture "$OOM|capturing|capture" -
run_one cublas_alloc "CUBLAS_STATUS|$OOM" -
run_one context_startup "CUDA error|$OOM" 0
run_one jax_jit "RESOURCE_EXHAUSTED|Out of memory|out of memory" - XLA_PYTHON_CLIENT_MEM_FRACTION=.08
run_one jax_prealloc "RESOURCE_EXHAUSTED|Out of memory|out of memory|[Ff]ailed to (pre)?allocate|Unable to initialize backend" 20
run_one jax_init_full "RESOURCE_EXHAUSTED|Out of memory|out of memory|Unable to initialize backend|[Ff]ailed to" 0
run_one pytorch_other_process "$OOM" 4
run_one pytorch_fragmentation "$OOM" -
run_one pytorch_expandable_segments "$OOM" - PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True
run_one pytorch_no_caching "$OOM" - PYTORCH_NO_CUDA_MEMORY_CACHING=1
run_one pytorch_malloc_async "$OOM" - PYTORCH_CUDA_ALLOC_CONF=backend:cudaMallocAsync
run_one pytorch_absurd "$OOM|1EB" -
run_one pytorch_train_loop "$OOM" -
run_one host_numpy "MemoryError|Unable to allocate" -
run_one device_assert "device-side assert" -
run_one illegal_access "illegal memory access|illegal address|ILLEGAL_ADDRESS" -
run_one accelerate_dispatch_model "$OOM" -
run_one accelerate_find_batch_size "No executable batch size" -
run_one torch_compile "$OOM" -
run_one hf_optimizer_step "$OOM" -
run_one hf_gradient_checkpointing "$OOM" -
run_one torch_load_map_location "$OOM" -
run_one safetensors_load_file "$OOM" -
run_one accelerate_offload_generate "$OOM" -
run_one hf_generate_static_cache "$OOM" -
run_one compiled_evaluate "$OOM" -
run_one compile_reduce_overhead "$OOM" -
run_one make_graphed_callables "$OOM" -
run_one lightning_optimizer_step "$OOM" -
run_one lightning_predict "$OOM" -
run_one logged_oom "$OOM" -
run_one logged_exception "$OOM" -
run_one jax_eager "RESOURCE_EXHAUSTED|Out of memory|out of memory" - XLA_PYTHON_CLIENT_MEM_FRACTION=.05
run_one triton_shared_memory "OutOfResources|out of resource" -
run_one hf_trainer_evaluate "$OOM" -
run_one ddp_train_step "$OOM" -
run_one fsdp_wrap "$OOM" -
run_one lightning_validate "$OOM" -
run_one generate_in_thread "$OOM" -
run_one no_grad_embed "$OOM" -
run_one accelerate_prepare "$OOM" -
run_one jax_predict "RESOURCE_EXHAUSTED|Out of memory|out of memory" - XLA_PYTHON_CLIENT_MEM_FRACTION=.05
run_one compiled_train_backward "$OOM" -
run_one nccl_barrier_startup "NCCL|$OOM" -
run_one host_torch_cpu "DefaultCPUAllocator|can't allocate memory|$OOM" -
run_one hf_pipeline_batch "$OOM" -
run_one peft_prepare_kbit "$OOM" -
run_one lightning_test "$OOM" -
run_one accelerate_forward_loop "$OOM" -
run_one script_module_loop "$OOM" -
run_one trainer_eval_accumulate "$OOM" -
run_one jax_fit_update "RESOURCE_EXHAUSTED|Out of memory|out of memory" - XLA_PYTHON_CLIENT_MEM_FRACTION=.06
run_one user_evaluate_nograd "$OOM" -
run_one accelerate_launch_cli "$OOM" -
run_one cdist_similarity "$OOM" -
run_one lightning_fit_model_to_device "$OOM" -
run_one caught_message_only "$OOM" -
# session 8 (blind): other call shapes; cublas_second_job starts its own second process mid-run
run_one autocast_accum_script "$OOM" -
run_one hf_auto_max_memory "$OOM" -
run_one peft_merge_unload "$OOM" -
run_one lightning_sanity_bf16 "$OOM" -
run_one lightning_callback_probe "$OOM" -
run_one accelerate_accumulate "$OOM" -
run_one compile_dynamic_rerank "$OOM" -
run_one cuda_graph_buckets "$OOM|capturing|capture" -
run_one jax_pmap_eval "RESOURCE_EXHAUSTED|Out of memory|out of memory" - XLA_PYTHON_CLIENT_MEM_FRACTION=.05
run_one jax_device_put_restore "RESOURCE_EXHAUSTED|Out of memory|out of memory" - XLA_PYTHON_CLIENT_MEM_FRACTION=.05
run_one jax_donate_learner "RESOURCE_EXHAUSTED|Out of memory|out of memory" - XLA_PYTHON_CLIENT_MEM_FRACTION=.06
run_one cublas_second_job "CUBLAS_STATUS|$OOM" -
run_one lightning_context_holder "CUDA error|$OOM" 0
run_one hf_beam_search_logged "$OOM" -
run_one pool_worker_cdist "$OOM" -
run_one host_collate_worker "DefaultCPUAllocator|can't allocate memory|MemoryError" -
run_one ce_label_assert "device-side assert" -
run_one triton_int32_overflow "illegal memory access|illegal address|ILLEGAL_ADDRESS" -
# session 9 (blind): Trainer resume and in-training eval, beam scores, a classification pipeline,
# Lightning manual backward and validation-epoch hooks, max-autotune serving, graphed training,
# DataParallel + checkpoint, cuDNN conv, torch.fft, JAX scan, PEFT under accelerate, cuBLAS and
# context creation while another job holds the card, and 3 look-alikes
run_one trainer_resume_optimizer "$OOM" -
run_one trainer_eval_steps "$OOM" -
run_one hf_generate_beams_scores "$OOM" -
run_one hf_pipeline_classify "$OOM" -
run_one lightning_manual_backward "$OOM" -
run_one lightning_val_epoch_end "$OOM" -
run_one compile_autotune_serve "$OOM" -
run_one graphed_encoder_train "$OOM" -
run_one dataparallel_checkpoint "$OOM" -
run_one conv_full_res_validation "$OOM" -
run_one fft_notebook_print "$OOM" -
run_one jax_scan_epochs "RESOURCE_EXHAUSTED|Out of memory|out of memory" - XLA_PYTHON_CLIENT_MEM_FRACTION=.05
run_one peft_accelerate_accumulate "$OOM" -
run_one cublas_shared_card_train "CUBLAS_STATUS|$OOM" -
run_one hf_pipeline_context_holder "CUDA error|$OOM" 0
run_one host_vocab_memoryerror "MemoryError" -
run_one gather_index_assert "device-side assert|index out of bounds" -
run_one triton_autotune_smem "OutOfResources|out of resource" -
# session 10 (blind): a Trainer compute_loss override, SWA, torch.func per-sample gradients, a
# DataModule's on-GPU augmentation, gather_for_metrics, LoRA on a conv net, a JAX attention
# service, a compiled optimizer step, whole-step graph capture, a worker thread's cuBLAS handle,
# context creation under torchrun, a streamer thread, a repr(e) cell, 3 look-alikes, safe_open
# shard loading and assisted generation
run_one trainer_distill_compute_loss "$OOM" -
run_one swa_averaged_copy "$OOM" -
run_one func_per_sample_grads "$OOM" -
run_one lightning_gpu_augment "$OOM" -
run_one accelerate_gather_eval "$OOM" -
run_one peft_conv_lora "$OOM" -
run_one jax_attention_server "RESOURCE_EXHAUSTED|Out of memory|out of memory" - XLA_PYTHON_CLIENT_MEM_FRACTION=.05
run_one compiled_optimizer_step "$OOM" -
run_one graph_full_train_step "$OOM|capturing|capture" -
run_one cublas_thread_worker "CUBLAS_STATUS|$OOM" -
run_one torchrun_context_holder "CUDA error|$OOM" 0
run_one hf_streamer_thread "$OOM" -
run_one notebook_repr_bar "$OOM" -
run_one host_rlimit_features "MemoryError|Unable to allocate" -
run_one hf_vocab_assert "device-side assert" -
run_one save_disk_full "No space left|file write failed|Errno 28" -
run_one safetensors_safe_open "$OOM" -
run_one hf_assisted_generate "$OOM" -
# session 11 (blind): Seq2SeqTrainer predict_with_generate, embedding resize, a long sampled
# decode, DDP wrapping under gloo (world 1), a plain optimizer resume, a hand-written int8
# quantizer, checkpoint recomputation, SDPA with a boolean mask, a cuDNN LSTM, JAX growing on
# demand beside another job, a vmapped JAX ensemble, raise ... from e, rich tracebacks, a
# per-process memory fraction, torchrun --tee prefixes, Lightning DDP on one device, 4 look-alikes
run_one seq2seq_predict_generate "$OOM" -
run_one hf_resize_embeddings "$OOM" -
run_one hf_generate_long_decode "$OOM" -
run_one ddp_wrap_gloo "$OOM" -
run_one resume_optimizer_state "$OOM" -
run_one naive_int8_quantize "$OOM" -
run_one checkpoint_recompute_backward "$OOM" -
run_one sdpa_bool_mask "$OOM" -
run_one lstm_cudnn_train "$OOM|CUDNN_STATUS" -
run_one jax_on_demand_shared "RESOURCE_EXHAUSTED|Out of memory|out of memory" 6 XLA_PYTHON_CLIENT_PREALLOCATE=false
run_one jax_vmap_ensemble "RESOURCE_EXHAUSTED|Out of memory|out of memory" - XLA_PYTHON_CLIENT_MEM_FRACTION=.05
run_one raise_from_user "$OOM" -
run_one rich_traceback_train "OutOfMemoryError|$OOM" -
run_one memory_fraction_cap "$OOM" -
run_one torchrun_tee_prefix "$OOM" -
run_one lightning_ddp_one_device "$OOM" -
run_one dataloader_shm_bus "[Bb]us error|exited unexpectedly|shared memory" -
run_one bce_no_sigmoid_assert "device-side assert" -
run_one hf_generate_nan_sampling "probability tensor contains" -
run_one triton_hash_gather_illegal "illegal memory access|illegal address|ILLEGAL_ADDRESS" -
# session 12 (blind): a Trainer on_save callback's fp32 export, Lightning's lr_find, a loss over a
# 256k vocabulary, FlexAttention block masks, a 4x upscaler under inference_mode,
# JAX shard_map and the platform allocator, FSDP2 fully_shard, handlers printing memory_summary()
# or nvidia-smi, logging + tqdm with a dense embedding gradient, a dataset copied to the card, a
# WGAN-GP penalty, a PEFT adapter load, MultiheadAttention weights, and 3 look-alikes
run_one trainer_save_callback "$OOM" -
run_one lightning_lr_find "$OOM" -
run_one train_loop_ce_vocab "$OOM" -
run_one flex_block_mask "$OOM" -
run_one upscale_inference_mode "$OOM" -
run_one jax_shard_map_mesh "RESOURCE_EXHAUSTED|Out of memory|out of memory" - XLA_PYTHON_CLIENT_MEM_FRACTION=.05
run_one jax_platform_allocator "RESOURCE_EXHAUSTED|Out of memory|out of memory" 6 XLA_PYTHON_CLIENT_ALLOCATOR=platform
run_one fsdp2_fully_shard "$OOM" -
run_one memory_summary_reraise "$OOM" -
run_one nvidia_smi_in_handler "$OOM" -
run_one logging_tqdm_backward "$OOM" -
run_one preload_dataset_gpu "$OOM" -
run_one gradient_penalty_double_backward "$OOM" -
run_one peft_load_adapter "$OOM" -
run_one mha_need_weights "$OOM" -
run_one nccl_duplicate_gpu "NCCL|Duplicate GPU" -
run_one policy_nan_categorical "found invalid values" -
run_one dataloader_worker_cgroup_killed "killed by signal|exited unexpectedly" -
# session 13 (blind): Lightning outputs kept with their graphs and the batch-size finder before a
# length curriculum, hand-written DPO, eager attention over packed blocks, a CLIP loss under
# accelerate, a rank-1024 LoRA, cuSOLVER / cuDNN handles after another job took the card, JAX
# logged as one line and without remat, a tuned allocator config, per-session KV caches,
# embeddings gathered on the card, a full-batch GNN, a spawned worker, skipped OOM batches, a 3D
# net under cudnn.benchmark, manual attention, a running loss holding graphs, SDPA's math
# backend, an EMA deepcopy, a perplexity loss's fp32 upcast, a runner printing stderr's tail,
# and 5 look-alikes
run_one s13_lightning_outputs_leak "$OOM" -
run_one s13_lightning_batch_finder_curriculum "$OOM" -
run_one s13_dpo_reference_forward "$OOM" -
run_one s13_eager_attention_packing "$OOM" -
run_one s13_accelerate_clip_backward "$OOM" -
run_one s13_peft_high_rank_adam "$OOM" -
run_one s13_cusolver_eigh_shared "CUSOLVER|cusolver|$OOM" -
run_one s13_cudnn_handle_full_card "CUDNN_STATUS|cuDNN error|$OOM" -
run_one s13_jax_logged_one_line "RESOURCE_EXHAUSTED|Out of memory|out of memory" - XLA_PYTHON_CLIENT_MEM_FRACTION=.05
run_one s13_jax_no_remat_layers "RESOURCE_EXHAUSTED|Out of memory|out of memory" - XLA_PYTHON_CLIENT_MEM_FRACTION=.05
run_one s13_alloc_conf_tuned "$OOM" -
run_one s13_kv_cache_sessions "$OOM" -
run_one s13_embed_corpus_cat "$OOM" -
run_one s13_gnn_full_batch_edges "$OOM" -
run_one s13_mp_spawn_worker "$OOM" -
run_one s13_skip_oom_batches "$OOM" -
run_one s13_conv3d_benchmark_volume "$OOM|CUDNN_STATUS" -
run_one s13_manual_attention_empty_cache "$OOM" -
run_one s13_total_loss_graph_leak "$OOM" -
run_one s13_sdpa_math_forced "$OOM" -
run_one s13_ema_deepcopy "$OOM" -
run_one s13_perplexity_eval_loss "$OOM" -
run_one s13_job_stderr_tail "$OOM" -
run_one s13_invalid_device_ordinal "invalid device ordinal" -
run_one s13_device_mismatch "same device" -
run_one s13_hf_offload_folder "offload" -
run_one s13_bnb_missing "bitsandbytes" -
run_one s13_shape_error_after_summary "cannot be multiplied" -
# session 14 (blind): Lightning callbacks (EMA swap at validation, SWA, fp32 export on save),
# test, predict and a rich-bar validation check, Trainer.evaluate's preprocess_logits_for_metrics,
# a sampling pipeline, generate keeping scores, accelerate's fp32 outputs, many LoRA adapters,
# torch.compile's first call, GradScaler's first step, a one-hot prep, torch.export, JSON logs, a
# cache-less decode, JAX eval and Adam state, and 5 look-alikes
run_one s14_lightning_ema_validation_swap "$OOM" -
run_one s14_lightning_swa_callback "$OOM" -
run_one s14_lightning_test_confusion "$OOM" -
run_one s14_lightning_predict_mc_dropout "$OOM" -
run_one s14_lightning_rich_val_check "$OOM" -
run_one s14_lightning_checkpoint_fp32_export "$OOM" -
run_one s14_hf_trainer_preprocess_logits "$OOM" -
run_one s14_hf_pipeline_sampling_generator "$OOM" -
run_one s14_hf_generate_output_scores "$OOM" -
run_one s14_accelerate_eval_fp32_outputs "$OOM" -
run_one s14_peft_multi_adapter_server "$OOM" -
run_one s14_compile_first_call "$OOM" -
run_one s14_amp_gradscaler_first_step "$OOM" -
run_one s14_bow_onehot_prep "$OOM" -
run_one s14_torch_export_run "$OOM" -
run_one s14_json_log_oom "$OOM" -
run_one s14_decode_no_cache_argmax "$OOM" -
run_one s14_jax_eval_full_valset "RESOURCE_EXHAUSTED|Out of memory|out of memory" - XLA_PYTHON_CLIENT_MEM_FRACTION=.05
run_one s14_jax_adam_state_init "RESOURCE_EXHAUSTED|Out of memory|out of memory" - XLA_PYTHON_CLIENT_MEM_FRACTION=.05
run_one s14_pandas_get_dummies_memoryerror "MemoryError|Unable to allocate" -
run_one s14_dist_store_timeout "Timed out|timed out|DistStoreError|TimeoutError" - MASTER_ADDR=127.0.0.1 MASTER_PORT=29517 RANK=0 LOCAL_RANK=0 WORLD_SIZE=2
run_one s14_no_cuda_visible "No CUDA GPUs|no NVIDIA|CUDA driver" - CUDA_VISIBLE_DEVICES=
run_one s14_storage_size_overflow "overflow" -
run_one s14_graph_capture_sync "stream is capturing|StreamCapture|capture.*(invalid|failed)" -
# session 15 (blind): a model run on inputs by plain user code (embeddings, retrieval top-k,
# segmentation argmax, candidate scoring), hand-written loss statements, a sharded fp32 load, weights
# converted in place (fp8 by hand, model.float(), DoRA's init), NCCL start-up on a full card,
# Lightning's configure_model and Fabric's backward, JAX sampling and a logged str(e), an NCCL
# gather, audio features, an error re-raised from None, a streamed chat turn before a long
# context, a child's last stderr line in a driver's error, accelerate's cpu_offload hooks, and 3
# look-alikes
run_one s15_hf_embed_mean_pool "$OOM" -
run_one s15_retrieval_topk_scores "$OOM" -
run_one s15_segmentation_argmax_fullres "$OOM" -
run_one s15_hf_score_candidates "$OOM" -
run_one s15_label_smoothing_loss_line "$OOM" -
run_one s15_contrastive_inbatch_loss "$OOM" -
run_one s15_hf_sharded_fp32_load "$OOM" -
run_one s15_hf_fp8_quantize "$OOM" -
run_one s15_hf_upcast_float_eval "$OOM" -
run_one s15_dist_init_card_full "CUDA error|NCCL|$OOM" 0
run_one s15_lightning_configure_model "$OOM" -
run_one s15_fabric_backward "$OOM" -
run_one s15_jax_sample_categorical "RESOURCE_EXHAUSTED|Out of memory|out of memory" - XLA_PYTHON_CLIENT_MEM_FRACTION=.05
run_one s15_dist_nccl_gather_logits "$OOM" -
run_one s15_pinned_host_pool "out of memory|CUDA error|pinned|[Aa]lloc" -
run_one s15_anomaly_nan_backward "returned nan values|nan values" -
run_one s15_hf_truncated_safetensors "SafetensorError|[Dd]eserializ|[Ii]ncomplete|header|Unable to load|OSError" -
run_one s15_audio_melspec_batch "$OOM" -
run_one s15_peft_dora_init "$OOM" -
run_one s15_rerank_error_from_none "RerankError|$OOM" -
run_one s15_jax_train_logged_str "RESOURCE_EXHAUSTED|Out of memory|out of memory" - XLA_PYTHON_CLIENT_MEM_FRACTION=.05
run_one s15_hf_generate_streamer_long_context "$OOM" -
run_one s15_subprocess_last_line "$OOM" -
run_one s15_accelerate_cpu_offload_forward "$OOM" -
# session 16 (blind): inference by plain user code (diffusion sampling + decode, a ViT at high
# resolution, JSON-logged sentence embeddings, test-time augmentation, mask post-processing,
# vocabulary similarity, attention probes), library helpers (num_return_sequences, Trainer.predict,
# load_checkpoint_in_model, PEFT's SVD adapter merge), eval after logged training, loading
# (to_empty, torch.load without map_location), a preallocated KV cache, Lightning's long padded
# batch, JAX conv and SVD, an OOM inside the OOM handler, a runner's last lines, 5 look-alikes
run_one s16_diffusion_sample_decode "$OOM|CUDNN_STATUS" -
run_one s16_vit_highres_attention "$OOM" -
run_one s16_sentence_embed_json_logs "$OOM" -
run_one s16_train_then_eval_large_batch "$OOM" -
run_one s16_meta_to_empty_load "$OOM" -
run_one s16_accelerate_load_checkpoint_in_model "$OOM" -
run_one s16_peft_svd_weighted_adapter "CUSOLVER|cusolver|$OOM" -
run_one s16_hf_generate_return_sequences "$OOM" -
run_one s16_hf_trainer_predict_seqcls "$OOM" -
run_one s16_hf_output_attentions_probe "$OOM" -
run_one s16_hf_vocab_similarity "$OOM" -
run_one s16_lightning_long_sample_batch "$OOM" -
run_one s16_jax_conv_resolution "RESOURCE_EXHAUSTED|Out of memory|out of memory" - XLA_PYTHON_CLIENT_MEM_FRACTION=.05
run_one s16_jax_pca_svd "RESOURCE_EXHAUSTED|Out of memory|out of memory" - XLA_PYTHON_CLIENT_MEM_FRACTION=.05
run_one s16_sparse_adjacency_dense "$OOM" -
run_one s16_mask_upsample_postprocess "$OOM" -
run_one s16_oom_recovered_then_save_error "does not exist" -
run_one s16_fork_worker_cuda_init "re-initialize CUDA|forked subprocess" -
run_one s16_mmap_replay_buffer_enomem "Cannot allocate memory|Errno 12" -
run_one s16_low_memory_warning_dtype_error "same dtype" -
run_one s16_child_killed_sigkill "Killed|status 137" -
run_one s16_oom_inside_oom_handler "$OOM" -
run_one s16_runner_last_lines "$OOM" -
run_one s16_kv_cache_prealloc_startup "$OOM" -
run_one s16_tta_flip_ensemble "$OOM|CUDNN_STATUS" -
run_one s16_torch_load_default_device "$OOM" -
# session 17 (blind): inference by plain user code (TTS vocoder, ASR, captioning by
# inputs_embeds, reward scoring with hidden states, NMS, video frames), stage-logged conversions
# (fp32 export, GPTQ-like calibration, torch.compile of a loaded model), training with a sampling
# or evaluation pass in the middle, start-up (accelerate on a held card, recsys tables), a
# hand-written gradient all-reduce, torchrun's @record summary, JAX with and without grad, and
# host-side or other look-alikes (ulimit -v, an RSS guard's Killed, a child died by SIGKILL, too
# many open files, a NaN loss under a memory report)
run_one s17_hf_export_fp32_state_dict "$OOM" -
run_one s17_peft_lora_train_sampling_pass "$OOM" -
run_one s17_torchrun_record_summary "$OOM" -
run_one s17_ulimit_v_cuda_init "CUDA|out of memory|MemoryError|Error" -
run_one s17_bash_rss_guard_killed "Killed|status 137" -
run_one s17_subprocess_died_sigkill "SIGKILL|died with|status -9" -
run_one s17_compile_recompile_card_full "$OOM|Triton Error" -
run_one s17_jax_knn_topk_json "RESOURCE_EXHAUSTED|Out of memory|out of memory" - XLA_PYTHON_CLIENT_MEM_FRACTION=.05
run_one s17_jax_grad_mlp_batches "RESOURCE_EXHAUSTED|Out of memory|out of memory" - XLA_PYTHON_CLIENT_MEM_FRACTION=.05
run_one s17_tts_vocoder_long_utterance "$OOM|CUDNN_STATUS" -
run_one s17_detection_pairwise_iou_nms "$OOM" -
run_one s17_hf_caption_inputs_embeds "$OOM" -
run_one s17_hf_reward_hidden_states "$OOM" -
run_one s17_hf_compile_loaded_model "$OOM|Triton Error" -
run_one s17_lightning_sample_callback "$OOM" -
run_one s17_accelerate_init_card_held "CUDA error|$OOM" 0
run_one s17_dataloader_too_many_open_files "ancdata|Too many open files|Errno 24|open files" -
run_one s17_nan_loss_after_memory_report "Loss became infinite or NaN" -
run_one s17_asr_long_file_manual_attention "$OOM" -
run_one s17_video_frames_float_cast "$OOM" -
run_one s17_train_mid_epoch_eval_cat "$OOM" -
run_one s17_hf_gptq_calibration_hooks "$OOM" -
run_one s17_amp_deprecated_warnings_backward "$OOM|CUDNN_STATUS" -
run_one s17_dist_flat_grad_allreduce "$OOM" -
run_one s17_recsys_embedding_tables "$OOM" -
run_one s17_jax_dpsgd_per_example_grads "RESOURCE_EXHAUSTED|Out of memory|out of memory" - XLA_PYTHON_CLIENT_MEM_FRACTION=.05
# session 19 (blind batch; the look-alikes and the CuPy, Numba, Equinox and sentence-transformers
# scenarios below the timm/torchvision lines have not run on a device yet)
J="RESOURCE_EXHAUSTED|Out of memory|out of memory"
run_one s19_hf_trainer_eval_on_start "$OOM" -
run_one s19_hf_pipeline_feature_extraction "$OOM" -
run_one s19_peft_modules_to_save_first_step "$OOM" -
run_one s19_uvicorn_embed_request_log "$OOM" -
run_one s19_paged_kv_pool_grow "$OOM" -
run_one s19_grad_accum_logged_only "$OOM" -
run_one s19_best_state_deepcopy "$OOM" -
run_one s19_fp16_master_weights "$OOM" -
run_one s19_moe_router_collapse "$OOM" -
run_one s19_func_hessian_influence "$OOM" -
run_one s19_dataloader_pin_memory_progressive "$OOM" -
run_one s19_timm_vit_train "$OOM" -
run_one s19_torchvision_maskrcnn_tiles "$OOM|CUDNN_STATUS" -
run_one s19_lightning_resume_card_shared "$OOM" 2
run_one s19_flax_trainstate_curriculum "$J" - XLA_PYTHON_CLIENT_MEM_FRACTION=.05
run_one s19_equinox_field_eval_logged "$J" - XLA_PYTHON_CLIENT_MEM_FRACTION=.05
run_one s19_cupy_stft_archive "OutOfMemoryError|Out of memory|out of memory" -
run_one s19_numba_density_grid "CUDA_ERROR_OUT_OF_MEMORY|out of memory" -
run_one s19_quantile_input_too_large "too large" -
run_one s19_jax_donated_buffer_reuse "deleted|donat" - XLA_PYTHON_CLIENT_MEM_FRACTION=.05
run_one s19_sklearn_pairwise_memoryerror "MemoryError|Unable to allocate" -
run_one s19_cupy_launch_out_of_resources "too many resources|OUT_OF_RESOURCES|CUDA_ERROR" -
run_one s19_gloo_allreduce_timeout "[Tt]imed out|[Tt]imeout|ProcessRaisedException|Connection closed" -
run_one s19_hf_sentence_transformers_encode "$OOM" -
# session 20 (blind): a reward model loaded beside another job, beam search in an IPython cell,
# a Trainer with a logging callback, `accelerate launch` of a LoRA merge, Lightning validation in
# fit with plain logs, a weight-normed vocoder under FutureWarnings, torchrun without @record, an
# OOM handler's NameError, JAX unfiltered and tqdm eval, cuBLAS at a warm-up, context creation in
# Trainer, and 4 look-alikes (killed worker, recovered OOM then a shape error, embedding assert,
# gRPC RESOURCE_EXHAUSTED)
run_one s20_hf_reward_load_card_shared "$OOM" 1
run_one s20_hf_ipython_generate_beams "$OOM" -
run_one s20_hf_trainer_logging_long_doc "$OOM" -
run_one s20_accelerate_launch_lora_merge "$OOM" -
run_one s20_lightning_fit_plain_logs_val "$OOM|CUDNN_STATUS" -
run_one s20_vocoder_weight_norm_warnings "$OOM|CUDNN_STATUS" -
run_one s20_torchrun_ddp_no_record "$OOM" -
run_one s20_oom_handler_nameerror "$OOM" -
run_one s20_jax_scan_accum_unfiltered "$J" - XLA_PYTHON_CLIENT_MEM_FRACTION=.05 JAX_TRACEBACK_FILTERING=off
run_one s20_jax_eval_tqdm_logits "$J" - XLA_PYTHON_CLIENT_MEM_FRACTION=.05
run_one s20_hf_first_forward_cublas "CUBLAS_STATUS|CUDA error|$OOM" -
run_one s20_hf_trainer_init_card_held "CUDA error|$OOM" 0
run_one s20_lightning_worker_killed "killed by signal|exited unexpectedly" -
run_one s20_oom_logged_then_shape_mismatch "cannot be multiplied" -
run_one s20_lightning_embedding_assert "device-side assert" -
run_one s20_grpc_resource_exhausted "RESOURCE_EXHAUSTED" -
# session 21 (blind): an L-BFGS inverse problem, a memory-history snapshot dumped in the OOM
# handler, a torch.utils.benchmark sweep, torch.profiler's memory table, a side-stream batch
# prefetcher, ZeroRedundancyOptimizer's first step, models built under `with torch.device("cuda")`,
# a BERT MLM Trainer, accelerate's notebook_launcher, PEFT with gradient checkpointing and
# logits_to_keep, Lightning's SimpleProfiler under 16-mixed and a DataModule's
# transfer_batch_to_device, JAX GP regression, a Flax NNX init, n-gram dedup with torch.unique,
# and 3 look-alikes (max_split_size_mb below the minimum, a memory fraction above 1, a Triton grid
# over 65535 rows)
J="RESOURCE_EXHAUSTED|Out of memory|out of memory"
run_one s21_lbfgs_field_fit "$OOM" -
run_one s21_memory_history_snapshot "$OOM" -
run_one s21_benchmark_attention_sweep "$OOM" -
run_one s21_profiler_memory_table "$OOM" -
run_one s21_stream_prefetcher_fullres "$OOM" -
run_one s21_zero_redundancy_adamw "$OOM" -
run_one s21_device_context_sweep "$OOM" -
run_one s21_hf_bert_mlm_trainer "$OOM" -
run_one s21_accelerate_notebook_launcher "$OOM" -
run_one s21_peft_gc_logits_to_keep "$OOM" -
run_one s21_lightning_simple_profiler_fp16 "$OOM" -
run_one s21_lightning_transfer_batch_mask "$OOM" -
run_one s21_jax_gp_cholesky "$J" - XLA_PYTHON_CLIENT_MEM_FRACTION=.05
run_one s21_flax_nnx_embedding_init "$J" - XLA_PYTHON_CLIENT_MEM_FRACTION=.05
run_one s21_ngram_dedup_unique "$OOM" -
run_one s21_alloc_conf_split_too_small "max_split_size_mb too small|CachingAllocator option" -
run_one s21_memory_fraction_over_one "Invalid fraction|fraction value|Allowed range" -
run_one s21_triton_grid_y_invalid "invalid argument|Triton Error|invalid configuration" -
# session 22 (blind): a GPU test file under pytest, an asyncio micro-batching server, PEFT's PiSSA
# init, Lightning with detect_anomaly and with strategy="fsdp" on one device, torchmetrics' AUROC
# state at compute(), PyG's GATConv on a full graph, GPyTorch prediction on a grid, torchdiffeq
# with a finer fixed step, NumPyro's Predictive, JAX's default preallocation beside a PyTorch
# encoder in one process, a float64 JAX Newton step, CUDA tensors held by a consumer process
# through a torch.multiprocessing queue, a batch sized from the card's total memory while another
# job holds it, an all-pairs optical-flow correlation, and 3 look-alikes (a truncated torch.save
# archive, the cuBLAS determinism check, PIL's decompression-bomb limit in a DataLoader worker)
J="RESOURCE_EXHAUSTED|Out of memory|out of memory"
run_one s22_hf_pytest_prefill_batches "$OOM" -
run_one s22_hf_asyncio_microbatcher "$OOM" -
run_one s22_peft_pissa_init "CUSOLVER|cusolver|$OOM" -
run_one s22_lightning_detect_anomaly_embedding "$OOM" -
run_one s22_lightning_fsdp_one_device "$OOM" -
run_one s22_torchmetrics_auroc_compute "$OOM" -
run_one s22_pyg_gat_full_batch "$OOM" -
run_one s22_gpytorch_grid_predict "$OOM" -
run_one s22_torchdiffeq_rk4_refine "$OOM" -
run_one s22_numpyro_predictive_draws "$J" - XLA_PYTHON_CLIENT_MEM_FRACTION=.05
run_one s22_jax_prealloc_torch_encoder "$OOM" -
run_one s22_jax_newton_hessian_x64 "$J" - XLA_PYTHON_CLIENT_MEM_FRACTION=.05
run_one s22_mp_queue_cuda_ipc_writer "$OOM" -
run_one s22_embed_batch_from_total_memory "$OOM|CUDNN_STATUS" 6
run_one s22_optical_flow_corr_volume "$OOM" -
run_one s22_torch_load_truncated_checkpoint "PytorchStreamReader|failed reading zip archive|central directory" -
run_one s22_deterministic_cublas_workspace "CUBLAS_WORKSPACE_CONFIG" -
run_one s22_pil_decompression_bomb_worker "DecompressionBombError|decompression bomb" -
# session 22, second H200 batch (blind): beam search keeping its scores for back-translation, a
# Trainer's in-training evaluation with compute_metrics and no eval_accumulation_steps,
# torch.compile's max-autotune at the first call, a PEFT model upcast to fp32 before merging, a
# server's KV pool sized from max batch x max length while another job holds the card, DDP over
# NCCL (world size 1) at the first backward, per-example gradients for data scoring and an
# empirical NTK in JAX, a Lightning prediction writer buffering on the card, a UNet on a whole
# 8192 x 8192 scene, a CTC loss on a long-utterance bucket, and 3 look-alikes (a device-side
# assert from an index_put_ with a void label, a host MemoryError for a dense adjacency matrix, a
# rendezvous port already in use)
run_one s22e_hf_beam_scores_backtranslate "$OOM" -
run_one s22e_hf_trainer_eval_logits_midtrain "$OOM" -
run_one s22e_compile_max_autotune_ffn "$OOM" -
run_one s22e_peft_fp32_upcast_merge "$OOM" -
run_one s22e_hf_kv_pool_server_start "$OOM" 40
run_one s22e_ddp_nccl_first_backward "$OOM" -
run_one s22e_jax_per_example_grad_scores "$J" - XLA_PYTHON_CLIENT_MEM_FRACTION=.05
run_one s22e_jax_empirical_ntk "$J" - XLA_PYTHON_CLIENT_MEM_FRACTION=.05
run_one s22e_lightning_prediction_writer_buffer "$OOM" -
run_one s22e_unet_whole_scene_nograd "$OOM|CUDNN_STATUS" -
run_one s22e_asr_ctc_sortagrad_buckets "$OOM|CUDNN_STATUS" -
run_one s22e_dice_onehot_void_label_assert "device-side assert|index out of bounds|illegal memory access" - CUDA_LAUNCH_BLOCKING=1
run_one s22e_citation_graph_dense_adjacency "MemoryError|Unable to allocate" -
run_one s22e_dist_port_in_use "EADDRINUSE|address already in use|failed to listen" -
# session 23 (blind): packing-free SFT with DataCollatorWithFlattening, a pairwise reward model
# under accelerate, Lightning's ddp_spawn on one device, GPU augmentation in spawned DataLoader
# workers, a hand-written decode loop growing its KV cache by torch.cat, top-p sampling over a
# 256k vocabulary, a diffrax ensemble with SaveAt(steps=True), an e3nn potential on a large radius
# graph, all_gather_object of numpy predictions under NCCL, a NeRF validation render in too-large
# chunks, BoTorch's optimize_acqf on a 40k-point GP, CuPy k-means codebooks, optax's L-BFGS on a
# large image (most beside another job's holder), and 5 look-alikes (multinomial over more than
# 2^24 items, save_pretrained onto a full disk, a CUDA graph replayed with a larger batch,
# torch.load's weights_only refusal, a negative tensor size from an int32 overflow)
J="RESOURCE_EXHAUSTED|Out of memory|out of memory"
run_one s23_hf_flattening_collator_sft "$OOM" 16
run_one s23_accelerate_reward_pairwise "$OOM" 20
run_one s23_lightning_ddp_spawn_oom "$OOM" 8
run_one s23_dataloader_worker_cuda_augment "$OOM" 3
run_one s23_manual_kv_cat_decode "$OOM" 10
run_one s23_topp_sort_large_vocab "$OOM" 6
run_one s23_diffrax_saveat_steps "$J" - XLA_PYTHON_CLIENT_MEM_FRACTION=.05
run_one s23_e3nn_tensor_product_edges "$OOM" 20
run_one s23_dist_all_gather_object_preds "$OOM" 3
run_one s23_nerf_render_chunk "$OOM" 16
run_one s23_botorch_optimize_acqf "$OOM" 10
run_one s23_cupy_kmeans_distances "OutOfMemoryError|Out of memory|out of memory" 8
run_one s23_optax_lbfgs_deblur "$J" - XLA_PYTHON_CLIENT_MEM_FRACTION=.05
run_one s23_multinomial_negative_sampling_categories "number of categories cannot exceed" -
run_one s23_hf_save_pretrained_disk_full "No space left|os error 28|Errno 28|StorageFull" -
run_one s23_cuda_graph_replay_grown_batch "must match the size of tensor" -
run_one s23_torch_load_weights_only_numpy "Weights only load failed|weights_only" -
run_one s23_negative_dim_int32_overflow "negative dimension" -
# session 23, second H200 batch (blind): a ViT-B/16 eval under no_grad with batch 4096, the
# word-language-model loop with the hidden state never detached (backward(retain_graph=True)),
# torch.utils.checkpoint over 16k-token hand-written attention (OOM in the forward, inside
# checkpoint), a custom autograd Function's backward under GradScaler, speculative decoding
# by hand, an unrolled log-domain Sinkhorn loss, F.unfold of 4K frames, a JAX wave-equation
# inversion (lax.scan under value_and_grad), CuPy's first allocation on a card another job holds
# (most beside another job's holder), and 3 look-alikes (numpy's float64 padding of a manifest,
# a DataLoader worker SIGKILLed by a host-memory watchdog, an illegal address from a Triton
# voxel scatter under CUDA_LAUNCH_BLOCKING=1)
J="RESOURCE_EXHAUSTED|Out of memory|out of memory"
run_one s23e_vit_eval_nograd_batch "$OOM" 10
run_one s23e_tbptt_hidden_retain_graph "$OOM" 12
run_one s23e_checkpoint_long_dna_attention "$OOM" 20
run_one s23e_clip_custom_function_backward "$OOM" 15
run_one s23e_speculative_decode_verify "$OOM" 12
run_one s23e_sinkhorn_unrolled_da_loss "$OOM" 16
run_one s23e_unfold_patch_denoise_4k "$OOM" 16
run_one s23e_jax_fwi_scan_grad "$J" - XLA_PYTHON_CLIENT_MEM_FRACTION=.05
run_one s23e_cupy_tiles_card_held "OutOfMemoryError|out of memory|cudaError|CUDA_ERROR" 0
run_one s23e_audio_manifest_pad_memoryerror "MemoryError|Unable to allocate" -
run_one s23e_dataloader_cache_worker_killed "killed by signal|exited unexpectedly" -
run_one s23e_triton_voxel_scatter_illegal "illegal memory access|illegal address|ILLEGAL_ADDRESS" - CUDA_LAUNCH_BLOCKING=1
# session 24 (blind): a Lightning checkpoint restored with map_location="cuda" (its AdamW state
# comes along), a model soup averaged on the card in float32, a home-made serving engine's
# profile run with a max_num_seqs x max_model_len dummy batch, a DQN replay buffer allocated on
# the device (the user's handler logs only the message), a batch summarization job whose third
# batch holds one 24k-word thread (the user's own BatchFailed raised from the OOM), a timm ViT's
# periodic evaluation, optax.MultiSteps in plain JAX, a GRPO step's group log-probs, second-order
# MAML, a hand-written Shampoo's first step (most beside another job's holder), and 4 look-alikes
# (a Rust tokenizer aborting under `ulimit -v`, a learned positional table indexed past its end,
# torch.compile with a full inductor cache volume, a GP's Cholesky on duplicated sites)
J="RESOURCE_EXHAUSTED|Out of memory|out of memory"
run_one s24_lightning_load_ckpt_map_location "$OOM" 2
run_one s24_hf_model_soup_average "$OOM" 6
run_one s24_hf_engine_profile_run "$OOM" 16
run_one s24_dqn_replay_buffer_device "$OOM" 40
run_one s24_hf_batch_summarize_outlier "$OOM" 12
run_one s24_timm_vit_periodic_eval "$OOM" 20
run_one s24_jax_optax_multisteps "$J" - XLA_PYTHON_CLIENT_MEM_FRACTION=.05
run_one s24_hf_grpo_group_logprobs "$OOM" 20
run_one s24_maml_inner_loop "$OOM" 16
run_one s24_shampoo_first_step "$OOM" 10
run_one s24_tokenize_corpus_job "memory allocation of [0-9]+ bytes failed" -
run_one s24_audio_encoder_long_clip "device-side assert" -
run_one s24_compile_shared_node_tmp "No space left|Errno 28" -
run_one s24_gpytorch_duplicate_sites "NotPSDError|not positive definite" -
# session 25 (blind): a Lightning UNet whose example_input_array is the serving batch (run by the
# model summary at the start of fit), a Mamba LM on the pure-PyTorch reference selective scan, a
# bf16 pretraining loop with an fp32 EMA, a lottery-ticket run's global magnitude pruning, a width
# x lr sweep keeping every trial's model, integrated gradients for a ViT on the whole card, a JAX
# particle-mesh N-body step, a guided DDIM upsampler keeping its intermediates, a logit-lens probe,
# a resume through torch.distributed.checkpoint's get_state_dict (most beside another job's
# holder), and 3 look-alikes (Arrow's allocator under `ulimit -v`, the kernel's OOM killer in a
# memory cgroup, a GCN over 1-based edge ids)
J="RESOURCE_EXHAUSTED|Out of memory|out of memory"
run_one s25_lightning_landcover_tiles "$OOM" 6
run_one s25_mamba_reference_lm "$OOM" 16
run_one s25_ema_bf16_pretrain "$OOM" 13
run_one s25_lottery_ticket_rounds "$OOM" 10
run_one s25_width_lr_sweep "$OOM" 12
run_one s25_vit_attributions "$OOM" -
run_one s25_jax_pm_nbody "$J" - XLA_PYTHON_CLIENT_MEM_FRACTION=.05
run_one s25_ddim_guided_upsampler "$OOM" 12
run_one s25_hf_logit_lens_probe "$OOM" 12
run_one s25_dcp_resume_run "$OOM" 10
run_one s25_events_parquet_merge "ArrowMemoryError|MemoryError|malloc of size" -
run_one s25_embedding_feature_job "Killed|status 137" -
run_one s25_pyg_citation_gcn "device-side assert|index out of bounds|illegal memory access" -
# session 26 (blind, helper H26D): a converter fusing QKV / gate-up into float32 on the card, a
# log-likelihood harness scoring its longest requests first, a notebook LoRA fine-tune with
# gradient checkpointing, a Lightning MoCo queue never trimmed, a JAX score-based sampler, a
# service loading three float32 models at startup, accelerate's first optimizer step, a ViT
# batch-size finder that leaves no room for AdamW's state (most beside another job's holder), a
# shard worker and a JAX sweep that print only the error's message, numba's context creation on a
# card another job holds, and 2 look-alikes (a torchrun worker killed in a memory cgroup, an
# illegal address from int32 row offsets in a CuPy kernel)
J="RESOURCE_EXHAUSTED|Out of memory|out of memory"
run_one s26_hf_qkv_fuse_export "$OOM" 3
run_one s26_hf_loglik_harness "$OOM" 8
run_one s26_peft_notebook_lora_backward "$OOM" 15
run_one s26_lightning_moco_queue_growth "$OOM" 6
run_one s26_jax_score_sampler "$J" - XLA_PYTHON_CLIENT_MEM_FRACTION=.05
run_one s26_hf_service_startup_models "$OOM" 5
run_one s26_accelerate_first_optimizer_step "$OOM" 9
run_one s26_vit_autobatch_then_adamw "$OOM" 16
run_one s26_shard_worker_logged_error "$OOM" 6
run_one s26_jax_sweep_summary_table "$J" - XLA_PYTHON_CLIENT_MEM_FRACTION=.05
run_one s26_numba_context_card_held "CUDA_ERROR_OUT_OF_MEMORY|out of memory|CudaAPIError|CudaSupportError" 0
run_one s26_host_torchrun_tokens_cgroup "SIGKILL|exitcode *: -9|Killed" -
run_one s26_cupy_mosaic_hist_int32_illegal "illegal memory access|illegal address|ILLEGAL_ADDRESS" -
# session 26 b (blind, helper H26E): a hand-written latent-diffusion sampler with classifier-free
# guidance, a decode server capturing CUDA graphs per batch size after sizing its KV cache, an LLM
# server sizing its paged KV cache from the card's total memory, a segmentation service's warm-up
# at its maximum batch (Rich logs), DDP wrapping a 3.6B model in a single-process NCCL group, an
# evaluation-only Trainer.evaluate(), a LoRA merge_and_unload + save + verification forward, a
# 256k-vocabulary cross-entropy under gradient accumulation, a Flax pmap'd train_step, a vector
# service whose first cuBLAS call comes after the index reserved the card (most beside another
# job's holder), a spawn worker's error re-raised as a bare RuntimeError, a JSON-lines job that
# logs only the error's type and message, and 1 look-alike (a Lightning DataModule reading an
# HDF5 array whole inside a memory cgroup, killed by the kernel)
J="RESOURCE_EXHAUSTED|Out of memory|out of memory"
run_one s26b_unet_cfg_sampler "$OOM" 6
run_one s26b_graph_capture_decode_server "$OOM|capturing|capture" 6
run_one s26b_hf_kv_block_server "$OOM" 8
run_one s26b_seg_service_warmup_max_batch "$OOM" 12
run_one s26b_ddp_single_process_wrap "$OOM" 10
run_one s26b_hf_trainer_evaluate_only "$OOM" 10
run_one s26b_peft_merge_save_verify "$OOM" 6
run_one s26b_grad_accum_big_vocab_ce "$OOM" 26
run_one s26b_flax_pmap_train_step "$J" - XLA_PYTHON_CLIENT_MEM_FRACTION=.05
run_one s26b_cublas_query_after_index_reserve "CUBLAS_STATUS|$OOM" -
run_one s26b_pool_worker_reraise_message "$OOM" 6
run_one s26b_json_log_job_failed "$OOM" 4
run_one s26b_lightning_h5_setup_cgroup "Killed|status 137" -
# session 26 c (blind, helper H26F): a stdlib HTTP service whose handler calls generate for a
# 16-sample request, a Keras-like JAX/Flax fit with progressive resizing, a Lightning
# trainer.validate() scoring all queries against all documents, a text-generation pipeline fed
# chunk by chunk, a float32 load_checkpoint_and_dispatch with a hand-written GPU 0 budget, a
# torch.compile'd encoder's first real request at a larger shape, a QLoRA-style
# prepare_model_for_kbit_training + first step, a distillation step whose handler logs only the
# message, a checkpoint-averaging export that prints only `error: <message>` (most beside another
# job's holder), and 1 look-alike (a DataLoader worker killed by a segmentation fault)
J="RESOURCE_EXHAUSTED|Out of memory|out of memory"
run_one s26c_dataloader_worker_segfault "exited unexpectedly|segmentation fault|Segmentation fault" -
run_one s26c_hf_http_handler_generate "$OOM" 5
run_one s26c_hf_pipeline_chunk_loop "$OOM" 5
run_one s26c_accelerate_device_map_gpu0 "$OOM" 2
run_one s26c_peft_kbit_prepare_first_step "$OOM" 6
run_one s26c_hf_kd_distill_logged_error "$OOM" 8
run_one s26c_hf_ckpt_average_export "$OOM" 5
run_one s26c_lightning_validate_retrieval "$OOM" 8
run_one s26c_jax_keras_fit_progressive "$J" - XLA_PYTHON_CLIENT_MEM_FRACTION=.05
run_one s26c_compile_first_call_larger_shape "$OOM" 10
# session 26 d (blind, helper H26G): a contrastive step on precomputed embeddings with a 65536 x
# 65536 similarity matrix, a PPO rollout keeping every step's graph, a 4x super-resolution of an
# 8K frame into a canvas on the card, a hand-written conformer over a one-hour recording (the loop
# prints only `ERROR <file>: <type>: <message>`), Trainer.predict() keeping a causal LM's logits,
# a ViT whose reentrant stage checkpoint runs out while recomputing in backward, a VAE decode whose
# handler prints torch.cuda.memory_summary() and re-raises, beam search (num_beams=8) over long
# documents whose loop prints only `FAILED (<type>: <message>)`, and a resume through
# torch.load(map_location="cuda") after the base model is on the card (all beside another job's
# holder)
run_one s26d_clip_contrastive_step "$OOM" 10
run_one s26d_rl_rollout_policy_graph "$OOM" 4
run_one s26d_superres_8k_tiles "$OOM|CUDNN_STATUS" 12
run_one s26d_conformer_long_audio_batch "$OOM" 20
run_one s26d_hf_trainer_predict_lm_logits "$OOM" 6
run_one s26d_checkpoint_stages_reentrant_vit "$OOM" 8
run_one s26d_vae_decode_memory_summary "$OOM|CUDNN_STATUS|CUBLAS_STATUS" 6
run_one s26d_hf_beam8_batch_summaries "$OOM" 5
run_one s26d_hf_resume_torch_load_cuda "$OOM" 3
# session 27 (blind, helper H27G): a torchvision RetinaNet trained on microscopy tiles with
# thousands of boxes each (custom collate, reference-style logs), running out in the loss's
# gt-to-anchor box_iou; a vocoder worker draining a JSON request spool whose handler answers a
# 20-minute chapter with a JSON error and exits 1 at the end; an OpenCV-decoded 720p clip cut
# into 59 overlapping windows and run through torchvision's r3d_18 at once; a JAX pseudo-spectral
# Navier-Stokes solver at 768^3 whose jitted RK4 step does not fit its memory fraction; a
# switch-MoE LM whose DeepSpeed-style dense combine/dispatch tensors take more than the whole
# empty card; an nn.TransformerEncoder classifier whose fp16 inference fast path (nested tensors)
# runs out in the first 512-document batch; a Lightning module whose example_input_array (a full
# 32 x 1024^2 batch) runs out in the ModelSummary forward at fit start; a joblib loky sweep whose
# worker's OOM comes back as a _RemoteTraceback (most beside another job's holder), and 3
# look-alikes (a CuPy RawKernel reading through a uint32 -1 sentinel: illegal address; the same
# kernel in numba.cuda, which on this image fails to compile with numpy 2.5's missing
# np.row_stack; a scipy CSR .toarray() of 5M x 40M on the host: MemoryError)
run_one s27_tv_retinanet_dense_gt_train "$OOM" 10
run_one s27_vocoder_jsonl_worker "$OOM" 4
run_one s27_video_cv2_sliding_clips "$OOM|CUDNN_STATUS" 16
run_one s27_jax_spectral_ns_rk4 "$J" - XLA_PYTHON_CLIENT_MEM_FRACTION=.10
run_one s27_moe_dense_dispatch_einsum "$OOM" -
run_one s27_transformer_fastpath_eval "$OOM" 6
run_one s27_lightning_summary_example_input "$OOM" 4
run_one s27_joblib_loky_trials "$OOM" 10
run_one s27_cupy_uint32_sentinel_illegal "ILLEGAL_ADDRESS|illegal memory access|illegal address|IllegalAddress" -
run_one s27_numba_knn_kernel_numpy_attr "row_stack|AttributeError" -
run_one s27_als_interactions_toarray "MemoryError|Unable to allocate" -
# session 27 b (blind, helper H27G2): a terminal chat REPL driven from a file on stdin whose
# fourth turn follows a /paste of a 118k-token log file (the whole conversation's prefill runs out
# in generate); an in-process replay of /v1/completions traffic logged the way uvicorn logs, one
# request (n=20, max_tokens=1500, logprobs=5) running out in generate(output_scores=True) and
# answered 500; a hand-written DPO step on a LoRA model taking its reference log-probs under
# disable_adapter() and running out in the policy forward (loguru-like lines, traceback logged);
# a run_clm_no_trainer-style accelerate loop whose length-grouped sampler puts the 16 x 4096
# batch first; a perplexity eval that loads float32 when bitsandbytes is missing and runs out on
# the logits (Rich-like lines); a needle-in-a-haystack retrieval-head probe with eager attention
# and output_attentions=True, logged as JSON lines, running out at 8192 tokens; a Flax LM whose
# config has remat off, RESOURCE_EXHAUSTED in the jitted train step (absl-style lines); a
# DeepLabV3 Cityscapes eval with multi-scale + flip TTA running out at a larger scale (most beside
# another job's holder); a fraud model's F.one_hot of a 183k-category column on the card, caught
# and printed as one summary line; and 2 look-alikes (gloo all_gather over uneven 5001/5000
# shards under mp.spawn; a ProcessPoolExecutor worker killed in a 3 GiB memory cgroup, which the
# parent sees as BrokenProcessPool)
J="RESOURCE_EXHAUSTED|Out of memory|out of memory"
run_one s27b_hf_chat_repl_paste_file "$OOM" 6
run_one s27b_hf_completions_logprobs_replay "$OOM" 4
run_one s27b_peft_dpo_disable_adapter_ref "$OOM" 16
run_one s27b_accelerate_clm_no_trainer_grouped "$OOM" 24
run_one s27b_hf_bnb_missing_fp32_ppl "$OOM" 6
run_one s27b_hf_needle_eager_attn_jsonl "$OOM" 16
run_one s27b_flax_lm_remat_off "$J" - XLA_PYTHON_CLIENT_MEM_FRACTION=.06
run_one s27b_tv_deeplab_multiscale_tta "$OOM|CUDNN_STATUS" 12
run_one s27b_gloo_allgather_uneven_shards "ProcessRaisedException|ProcessExitedException|[Gg]loo|preamble|[Tt]imed out|terminated" -
run_one s27b_host_pool_broken_cgroup "BrokenProcessPool|terminated abruptly" -
run_one s27b_tabular_gpu_one_hot "$OOM" -
# session 27 c (blind, helper H27G3): the same failures reported in different ways. A
# prompt-scoring job whose registry helper wraps from_pretrained's OOM (loading into a nearly full
# card) as `raise RuntimeError(...) from e`, so both tracebacks print; a batch-generation driver
# whose one-process multiprocessing.Pool (spawn) worker runs out in generate() and pool.imap
# re-raises it in the parent under a RemoteTraceback; a notebook replayed through IPython's
# InteractiveShell whose third cell (a LoRA training step) runs out ("Cell In[3]"; IPython is
# carried as wheels: OOMDOC_CORPUS_IPYTHON_SITE, else a note); an embedding service logging
# through rich with rich's traceback handler, whose torch.compile(dynamic=True) warm-up runs out
# at its largest bucket; a perplexity harness whose logging formatter prefixes every line of the
# traceback, running out on a long-document split; a full fine-tune on older APIs whose log is
# mostly FutureWarning/UserWarning lines before the first step runs out; a sweep launcher of the
# user's own over torch.distributed.launcher.api.elastic_launch, whose @record worker runs out and
# whose ChildFailedError summary ends the text; a click CLI that prints only `Error: <message>`
# and exits 1; a depth-estimation job that catches the OOM and retries with half the batch in its
# except block, running out again ("During handling of the above exception"); a benchmark
# harness's Markdown table with OOM cells and a failures section (most beside another job's
# holder); and 3 look-alikes (an SFT run that adds ChatML tokens without resizing the
# embeddings: device-side assert; a pipeline stage under RLIMIT_AS: numpy's MemoryError; a
# two-rank gloo DDP run whose all-reduce times out while rank 0 evaluates)
run_one s27c_hf_load_reraise_from "$OOM" 1
run_one s27c_hf_generate_pool_worker "$OOM" 5
run_one s27c_peft_ipython_lora_step "$OOM" 8 ${OOMDOC_CORPUS_IPYTHON_SITE:+PYTHONPATH=$OOMDOC_CORPUS_IPYTHON_SITE}
run_one s27c_compile_warmup_rich "$OOM" 6
run_one s27c_hf_eval_logging_prefixed_tb "$OOM" 4
run_one s27c_hf_full_ft_warnings "$OOM" 10
run_one s27c_elastic_launcher_summary "$OOM" -
run_one s27c_cli_error_only "$OOM" 3
run_one s27c_retry_halved_batch_fails "$OOM|CUDNN_STATUS" 6
run_one s27c_bench_attention_table "$OOM" -
run_one s27c_hf_added_tokens_device_assert "device-side assert" -
run_one s27c_host_rlimit_as_memoryerror "MemoryError|Unable to allocate" -
run_one s27c_gloo_ddp_timeout_rank0_eval "ProcessRaisedException|ProcessExitedException|[Gg]loo|[Tt]imed out|terminated" -
# session 28 (blind, helper H28G): report shapes the corpus lacked. A reranking service replaying
# its request log as JSON lines, whose failed request's record carries the whole traceback in one
# "exc_info" string (\n escapes), the third request (200 pairs x 1024 tokens) running out; an absl
# app (--logtostderr) whose shard reader logs 72 glog-style lines after the program's few print()
# lines, before the first step of a wide MLP at batch 65536 runs out; a hand-written-attention LM
# trained with a sequence-length curriculum that prints only `epoch N` and a summary line (planned:
# epoch 3's backward; on the H200 its forward ran out first); a 1.07B fp32 residual MLP under gradient accumulation whose first
# AdamW step cannot make its state; a tqdm embedding pass (bare Llama, mean pooling; planned to
# run out on a 9000-word document in batch 31, on the H200 the first batch ran out); a scorer compiled with mode="reduce-overhead" warming up
# batch buckets; JAX under pytest (a 1024^3 spectral Poisson case: FAILURES section and short
# summary); a 48-block unrolled jitted JAX program with XLA_PYTHON_CLIENT_PREALLOCATE=false; a
# ResNet-152 fine-tune as `kubectl logs --timestamps` shows it (RFC 3339 stamp on every line); a
# real interactive python3 session in a pseudo-terminal (`File "<stdin>"`) running out on a
# 50000 x 300000 similarity matmul, then the user's next lines; a typer CLI whose rich traceback
# panel reports a UNet on 4096^2 tiles running out (most beside another job's holder); and 3
# look-alikes (pure-fp16 training whose clip_grad_norm_(error_if_nonfinite=True) raises on a
# batch of raw 16-bit counts; a CuPy float4 kernel fed a view one float into its buffer:
# misaligned address; an sm_80-only cubin from nvcc loaded by cupy.RawModule on the H200: no
# kernel image)
J="RESOURCE_EXHAUSTED|Out of memory|out of memory"
run_one s28_hf_jsonlog_exc_info_reranker "$OOM" 3
run_one s28_absl_glog_prefetch_tail "$OOM" 8
run_one s28_plain_epochs_curriculum_attention "$OOM" 21
run_one s28_grad_accum_adam_state_init "$OOM" 12
run_one s28_hf_embed_tqdm_mean_pool "$OOM" 4
run_one s28_compile_reduce_overhead_buckets "$OOM" 6
run_one s28_jax_pytest_fft_sizes "$J" - XLA_PYTHON_CLIENT_MEM_FRACTION=.05
run_one s28_jax_unrolled_jit_on_demand "$J" 5 XLA_PYTHON_CLIENT_PREALLOCATE=false
run_one s28_kubectl_timestamps_train "$OOM|CUDNN_STATUS" 6
run_one s28_repl_console_session "$OOM" 8
run_one s28_typer_cli_rich_traceback "$OOM|CUDNN_STATUS" 6
run_one s28_clip_grad_nonfinite_fp16 "non-finite" -
run_one s28_cupy_misaligned_float4 "MISALIGNED_ADDRESS|[Mm]isaligned address" -
run_one s28_cubin_sm80_no_binary "NO_BINARY_FOR_GPU|no kernel image" -
# session 37 (blind, helper H37): report shapes the corpus lacked. `docker compose up` output of
# an API container whose 2 GiB memory limit (a cgroup) kills from_pretrained's fp32 upcast on the
# host ("api-1 exited with code 137"); a Lightning bf16-true fit whose
# StochasticWeightAveraging(device="cuda") moves its fp32 average copy to the card at the SWA
# epoch; an AOTInductor package whose C++ runner runs out on a large batch; torch.compile under
# TORCH_LOGS=recompiles running out after two recompilations; a reduce-overhead extractor that
# keeps its outputs, planned to run out while recording its CUDA graph; PEFT LoHa, whose forward
# builds full delta weights; an accelerate resume (load_state) read back from a nohup log; a
# cuBLAS handle the autograd engine's thread cannot create in the first backward; pytest-xdist
# workers whose session fixture cannot create a CUDA context; orbax restoring onto the card; a
# JAX fp32 -> bf16 cast of every parameter; a zero-shot-classification pipeline (most beside
# another job's holder); and 3 look-alikes (JAX forced onto the CPU under `ulimit -v`;
# onnxruntime's CPU BFC arena under an SGE h_vmem cap; a pytest peak-memory budget assertion)
J="RESOURCE_EXHAUSTED|Out of memory|out of memory"
run_one s37_hf_compose_fp32_load_killed "exited with code 137" -
run_one s37_lightning_swa_average_to_cuda "$OOM" 6
run_one s37_aoti_package_runner_batch "$OOM|run_func_|API call failed" 12
run_one s37_compile_torch_logs_recompiles "$OOM" 6 TORCH_LOGS=recompiles
run_one s37_compile_cudagraph_record_kept_outputs "$OOM" 6
run_one s37_peft_loha_delta_weight_train "$OOM" 4
run_one s37_accelerate_load_state_nohup "$OOM" -
run_one s37_cublas_backward_thread_handle "CUBLAS_STATUS|$OOM" -
run_one s37_pytest_xdist_context_card_held "CUDA error|$OOM" 0
run_one s37_jax_cpu_platform_ulimit_lookalike "RESOURCE_EXHAUSTED|[Oo]ut of memory|bad_alloc|MemoryError|Aborted|[Rr]esource exhausted" -
run_one s37_ort_cpu_bfc_arena_h_vmem "Failed to allocate memory|RUNTIME_EXCEPTION|bad_alloc|MemoryError" -
run_one s37_jax_orbax_restore_on_card "$J" - XLA_PYTHON_CLIENT_MEM_FRACTION=.01
run_one s37_jax_params_bf16_cast "$J" - XLA_PYTHON_CLIENT_MEM_FRACTION=.08
run_one s37_hf_zero_shot_pipeline_labels "$OOM" 3
run_one s37_pytest_peak_memory_budget_lookalike "over the .* budget" -
# session 39 (blind, helper D39): stages shown in other ways. `srun --label` task lines around a
# from_pretrained(device_map={"": 0}) load; accelerate init_empty_weights then to_empty(cuda); an
# ImageNet-example resume (torch.load map_location=cuda); a float16 copy of an fp32 state dict; a
# cudnn.benchmark warm-up bar; a JAX decode server's KV cache init; a torch.cuda.graph capture bar;
# TextStreamer with eager attention on a long document; a ThreadPoolExecutor future.result(); a
# torch.compile'd LightningModule; a JAX+optax step beside another job (no preallocation); PEFT
# prompt tuning; a Trainer callback printing memory per step; a bash `set -x` GPU preflight on a
# full card; 3 look-alikes (torch.load mmap under RLIMIT_AS; accelerate launch's child killed in
# a 3 GiB cgroup; a 1-based edge list's device assert) and 2 with no stage (an alert line; a
# traceback of generic helpers)
J="RESOURCE_EXHAUSTED|Out of memory|out of memory"
run_one s39_hf_srun_label_device_map_load "$OOM" 1
run_one s39_accelerate_meta_to_empty_cuda "$OOM" 2
run_one s39_resume_torch_load_imagenet_style "$OOM" 3
run_one s39_hf_fp16_export_state_copy "$OOM" -
run_one s39_cudnn_benchmark_warmup_tqdm "$OOM|CUDNN_STATUS" 12
run_one s39_jax_decode_kv_cache_init "$J" - XLA_PYTHON_CLIENT_MEM_FRACTION=.05
run_one s39_cuda_graph_capture_tqdm_sizes "$OOM|capturing|capture" 8
run_one s39_hf_textstreamer_eager_long_doc "$OOM" 4
run_one s39_threadpool_future_result_shards "$OOM|CUDNN_STATUS" 6
run_one s39_lightning_compiled_module_fit "$OOM" 6
run_one s39_jax_optax_adamw_card_held "$J" 6 XLA_PYTHON_CLIENT_PREALLOCATE=false
run_one s39_peft_prompt_tuning_virtual_tokens "$OOM" 6
run_one s39_hf_trainer_memwatch_callback "$OOM" 8
run_one s39_healthcheck_xtrace_context_card_held "CUDA error|$OOM" 0
run_one s39_torch_load_mmap_rlimit_lookalike "unable to mmap|Cannot allocate memory|MemoryError|can't allocate" -
run_one s39_accelerate_launch_host_cgroup_killed "SIGKILL|died with|CalledProcessError|Killed" -
run_one s39_gnn_scatter_add_1based_assert "device-side assert" -
run_one s39_alert_message_only "$OOM" -
run_one s39_generic_fn_traceback_unknown "$OOM" 4
echo "done in $(( $(date +%s) - start )) s: $(grep -c ': TEXT' "$summary") texts, $(grep -c ': NOTE' "$summary") notes in $OUT" | tee -a "$summary"
