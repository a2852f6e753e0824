//! A serving engine's echo of a request or a response (`oom_text::echo`): a user's prompt that
//! quotes an error is content, not the server's failure; a failure printed after it is read.

use super::explain_text;
use crate::model::explain::Phase;

const VLLM_HEAD: &str = "\
INFO 11-29 10:00:01 api_server.py:585] vLLM API server version 0.6.4
INFO 11-29 10:00:12 model_runner.py:1072] Starting to load model meta-llama/Llama-3.1-8B-Instruct...
INFO 11-29 10:00:41 model_runner.py:1077] Loading model weights took 14.9888 GB
INFO:     Application startup complete.
";

/// vLLM's `RequestLogger.log_inputs` line, its prompt quoting a whole PyTorch OOM message.
const QUOTING_PROMPT: &str = "INFO 11-29 17:00:46 logger.py:37] Received request chatcmpl-1edc: \
    prompt: 'why do I get torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. \
    GPU 0 has a total capacity of 79.15 GiB of which 1.00 GiB is free', params: \
    SamplingParams(n=1, temperature=0.7), prompt_token_ids: [128000, 9920], lora_request: None.\n";

#[test]
fn a_prompt_that_quotes_an_oom_is_not_the_servers_failure() {
    let text = format!("{VLLM_HEAD}{QUOTING_PROMPT}INFO:     127.0.0.1:50412 - \"POST /v1/chat/completions HTTP/1.1\" 200 OK\n");
    let report = explain_text(&text);
    assert!(!report.is_gpu_oom, "{:?}", report.ooms);
    assert!(report.ooms.is_empty(), "{:?}", report.ooms);
    // A prompt that only names the failure in words is content too.
    let words = format!(
        "{VLLM_HEAD}INFO 11-29 17:00:45 logger.py:37] Received request chatcmpl-2cee: prompt: \
         'my laptop ran out of memory (OOM), what now?', params: SamplingParams(n=1).\n"
    );
    assert!(explain_text(&words).ooms.is_empty());
    // The model's output echoed by `log_outputs`, and SGLang's `--log-requests` lines.
    for echo in [
        "INFO 11-29 17:00:47 logger.py:71] Generated response chatcmpl-1edc: output: 'CUDA out \
         of memory means the GPU is full', output_token_ids: [34, 56], finish_reason: stop\n",
        "[2025-05-27 20:00:05] Receive: obj=GenerateReqInput(text='RuntimeError: CUDA error: out \
         of memory', sampling_params={'temperature': 0.7}, rid='a1')\n",
        "[2025-05-27 20:00:14] Finish: obj=GenerateReqInput(rid='a1'), out={'text': 'OOM killed \
         the process', 'meta_info': {'prompt_tokens': 12}}\n",
    ] {
        let report = explain_text(&format!("{VLLM_HEAD}{echo}"));
        assert!(report.ooms.is_empty(), "{echo}: {:?}", report.ooms);
    }
}

#[test]
fn a_failure_after_an_echoed_prompt_is_read() {
    let text = format!(
        "{VLLM_HEAD}{QUOTING_PROMPT}\
ERROR 11-29 17:00:50 async_llm_engine.py:64] Engine background task failed
ERROR 11-29 17:00:50 async_llm_engine.py:64] Traceback (most recent call last):
ERROR 11-29 17:00:50 async_llm_engine.py:64]   File \"/usr/lib/python3.12/site-packages/vllm/worker/model_runner.py\", line 1654, in execute_model
ERROR 11-29 17:00:50 async_llm_engine.py:64]     hidden_or_intermediate_states = model_executable(
ERROR 11-29 17:00:50 async_llm_engine.py:64] torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 512.00 MiB. GPU 0 has a total capacity of 79.15 GiB of which 300.00 MiB is free.
"
    );
    let report = explain_text(&text);
    assert!(report.is_gpu_oom);
    assert_eq!(report.ooms.len(), 1, "{:?}", report.ooms);
    assert_eq!(report.ooms[0].line, 10);
    let oom = report.oom.as_ref().expect("the failure");
    assert_eq!(
        oom.tried_to_allocate_bytes.map(|bytes| bytes.get()),
        Some(512 * 1024 * 1024)
    );
    assert_eq!(report.phase.failed_in, Phase::Inference);
    // A line that is not an echo (no `prompt: ` after the request id) is read as before.
    let error = format!(
        "{VLLM_HEAD}ERROR 11-29 17:00:50 serving_chat.py:196] Error in request chatcmpl-1edc: \
         CUDA out of memory. Tried to allocate 512.00 MiB. GPU 0 has a total capacity of 79.15 \
         GiB of which 300.00 MiB is free.\n"
    );
    assert!(explain_text(&error).is_gpu_oom);
}

/// A Chinese title glues a lower-case `oom` to whatever word comes before it (`lora微调oom`,
/// `128步报错oom`): a report of the failure, held until the lines after it show GPU work, as
/// the capitals are; the Chinese words of denial or advice before it still deny it.
#[test]
fn lower_case_oom_glued_to_a_chinese_word_is_named() {
    let frames = "[rank1]: Traceback (most recent call last):\n\
                  [rank1]:   File \"/conda/lib/python3.10/site-packages/transformers/trainer.py\", \
                  line 2206, in train\n";
    for title in [
        "# qwen2_5vl lora微调oom",
        "# Qwen3.5-27B lora微调时128步报错oom",
        "训练到一半还是oom了",
    ] {
        let report = explain_text(&format!("{title}\n\n{frames}"));
        assert!(report.is_gpu_oom, "{title}");
    }
    for denied in ["调小batch可以避免oom", "这样就不会oom", "bloom微调"] {
        let report = explain_text(&format!("{denied}\n\n{frames}"));
        assert!(!report.is_gpu_oom, "{denied}");
    }
}
