//! Whole-text checks of what session 26's blind batches showed missing. Every text is
//! synthetic.

use super::explain_text;
use crate::model::explain::Phase;
use crate::model::failure::EngineName;
use crate::model::Bytes;

pub(super) const NEW_OOM: &str =
    "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 800.00 MiB. \
     GPU 0 has a total capacity of 15.56 GiB of which 442.62 MiB is free. Including non-PyTorch \
     memory, this process has 15.12 GiB memory in use. Of the allocated memory 14.88 GiB is \
     allocated by PyTorch, and 38.19 MiB is reserved by PyTorch but unallocated.";

#[test]
fn vllms_multimodal_profiling_warning_starts_the_profiling() {
    let text = format!(
        "INFO 04-27 16:27:40 [model_runner.py:1146] Model loading took 7.16 GiB\n\
         WARNING 04-27 16:27:59 [profiling.py:245] The sequence length used for profiling \
         (max_num_batched_tokens / max_num_seqs = 20000) is too short to hold the multi-modal \
         embeddings in the worst case (98304 tokens in total, out of which {{'image': 81920}} \
         are reserved for multi-modal embeddings).\n\
         ERROR 04-27 16:28:02 [engine.py:448] {NEW_OOM}\n"
    );
    let report = explain_text(&text);
    assert_eq!(report.phase.failed_in, Phase::Profiling);
    assert_eq!(report.engine.name, EngineName::Vllm);
}

#[test]
fn a_weights_file_the_host_cannot_map_is_the_weights_load() {
    let text = "Failed to load model with Error: unable to mmap 4965799096 bytes from file \
                <Llama-3.2-3B-Instruct/model-00001-of-00002.safetensors>: Cannot allocate \
                memory (12)\n";
    let report = explain_text(text);
    assert!(!report.is_gpu_oom);
    assert_eq!(report.phase.failed_in, Phase::WeightsLoad);
    let first = report.ooms.first().expect("the host's failure");
    assert_eq!(first.details.host_required_bytes, Some(Bytes(4965799096)));
    // A data file that cannot be mapped is not the weights.
    let text = "unable to mmap 4965799096 bytes from file <shards/train-00001.arrow>: Cannot \
                allocate memory\n";
    assert_ne!(explain_text(text).phase.failed_in, Phase::WeightsLoad);
}

#[test]
fn llama_cpps_full_kv_cells_name_llama_cpp() {
    let text = "[37723] 52.17.233.232 W srv        decode: failed to find free space in the KV \
                cache, retrying with smaller batch size, off = 760, n_batch = 64, ret = 1\n\
                [37723] 52.17.239.030 E init_batch: failed to prepare attention ubatches\n\
                [37723] 52.17.239.038 W decode: failed to find a memory slot for batch of size \
                64\n";
    let report = explain_text(text);
    assert!(!report.is_gpu_oom);
    assert_eq!(report.engine.name, EngineName::Llamacpp);
}

#[test]
fn characters_outside_ascii_before_a_call_or_a_name_never_split() {
    // A statement, a path and a message whose separators are wider than a byte (an ideographic
    // comma, a no-break space, an ideographic space) before a call, a name or a class.
    for text in [
        "特定後、原因のtorch.unique(labels)を検証\nRuntimeError: CUDA error: device-side assert \
         triggered\n",
        "    out = model(x)、y = net(z)\ntorch.OutOfMemoryError: CUDA out of memory. Tried to \
         allocate 2.00 MiB.\n",
        "erreur\u{a0}MemoryError: Unable to allocate 8.00 GiB\n",
        "échec\u{3000}RayTaskError(OutOfMemoryError): ray::Worker.execute_model()\n",
        "ÉVK_ERROR_OUT_OF_DEVICE_MEMORY\n",
        "x\u{a0}clCreateBuffer failed: MEM_OBJECT_ALLOCATION_FAILURE\n",
        "W\u{a0}external/xla/xla/service/gpu.cc:123] something\nRESOURCE_EXHAUSTED: Out of \
         memory while trying to allocate 1.00GiB.\n",
        "ä\u{a0}Error: CUDA error: out of memory\n",
    ] {
        let report = explain_text(text);
        assert!(
            !report.ooms.is_empty() || report.phase.failed_in == Phase::Unknown,
            "{text}"
        );
    }
}

#[test]
fn a_programs_arrow_before_its_stage_line_keeps_the_line() {
    let text = "==> saving merged model to merged-model\n\
                ==> verifying merged model on 16 x 4096 tokens\n\
                Traceback (most recent call last):\n  File \"/tmp/x.py\", line 36, in <module>\n\
                \x20   y = foo(ids)\n\
                torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 704.00 MiB.\n";
    assert_eq!(explain_text(text).phase.failed_in, Phase::Inference);
}

#[test]
fn a_log_line_with_wide_whitespace_after_its_level_never_splits() {
    for line in [
        "2026-12-04 10:00:00 INFO \u{3000}  | lm\u{30fc}server | allocating KV cache for 256 \
         sequences",
        "INFO \u{a0}\u{3000}  |\u{3000}step 3 | loss 0.9982",
        "INFO\u{3000}group\u{3002}cc\u{ff1a}96 -> 3",
        "WARNING \u{2010}\u{3000}kwargs request_output_len is deprecated",
    ] {
        let text = format!(
            "{line}\ntorch.OutOfMemoryError: CUDA out of memory. Tried to \
                            allocate 2.00 MiB.\n"
        );
        let _ = explain_text(&text);
        let _ = crate::analyze::phase::stage_line_phase(line);
    }
}

#[test]
fn nd4js_device_allocation_failure_is_a_gpu_oom_with_its_size() {
    let text = "Caused by: java.lang.RuntimeException: Failed to allocate 637074016 bytes from \
                DEVICE [0] memory\n    at org.nd4j.jita.memory.CudaMemoryManager.allocate(\
                CudaMemoryManager.java:76)\n";
    let report = explain_text(text);
    assert!(report.is_gpu_oom);
    let oom = report.oom.expect("the failure");
    assert_eq!(oom.tried_to_allocate_bytes, Some(Bytes(637074016)));
    assert!(oom.gpu_index.is_some());
}
