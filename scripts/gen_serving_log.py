#!/usr/bin/env python3
"""Deterministic generator of realistic serving logs for scripts/bench_explain.sh.

Unlike the `serving` log of bench_explain.sh (two line shapes whose lengths barely vary),
these lines vary as real ones do: client IPv4/IPv6 addresses and ports of every length,
request ids (uuids, numbered ids), prompts and sampling parameters, token counts, throughput
figures, timestamps with a varying number of fractional digits (`kubectl logs --timestamps`
trims trailing zeros), so few consecutive lines have the same length. The vLLM sections also
hold what real deployments add: JSON lines from a structured-logging formatter, long prompts
echoed whole (thousands of characters), and multi-line Python warnings.

Engines (one section each, every section starts with the engine's startup lines):
  vllm-v0   vLLM 0.6 API server: `Received request`/`Added request`/`Finished request` lines,
            uvicorn access lines, `Avg prompt throughput` metrics every few seconds
  vllm-v1   vLLM 0.10 (V1 engine) behind `kubectl logs --timestamps`: the same with
            `[file.py:NN]` locations and `Engine 000:` stats lines
  sglang    SGLang: `Prefill batch.` / `Decode batch.` scheduler lines, access lines
  tgi       text-generation-inference: tracing lines with spans and request parameters
  llamacpp  llama.cpp server: `slot launch_slot_` / `update_slots` / timings / `log_server_r`
  mixed     (default) all five one after the other (a node's log across engine restarts)
  ollama    Ollama: `[GIN]` access lines, `level=DEBUG source=sched.go` lines (not in mixed)
  trainer   training output: Trainer tqdm bars and loss dicts, Lightning bars, DeepSpeed and
            Megatron step lines, a training loop's own STEP lines (not in mixed)
The last section ends with a real failure: a CUDA out-of-memory traceback.

Usage: gen_serving_log.py [--engine NAME] [--size-mib N | --size-kib N] [--no-failure]
                          [--seed N] OUTPUT
Python 3 standard library only; the same arguments always give the same bytes.
"""

import argparse
import random
import sys

ENGINES = ["vllm-v0", "sglang", "tgi", "llamacpp", "vllm-v1"]
# Not in `mixed` (its bytes stay those of earlier benchmark figures): for excerpts and runs of
# their own.
OTHERS = ["ollama", "trainer"]

OOM = (
    "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 1.96 GiB. GPU 0 has a total "
    "capacity of 79.19 GiB of which 1.02 GiB is free. Process 2817 has 78.16 GiB memory in use. "
    "Of the allocated memory 75.90 GiB is allocated by PyTorch, and 1.21 GiB is reserved by "
    "PyTorch but unallocated. If reserved but unallocated memory is large try setting "
    "PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True to avoid fragmentation.  See documentation "
    "for Memory Management  (https://pytorch.org/docs/stable/notes/cuda.html#environment-variables)"
)

WORDS = (
    "the a of to and in is it you that he was for on are with as his they be at one have this "
    "from or had by hot word but what some we can out other were all there when up use your how "
    "said an each she which do their time if will way about many then them write would like so "
    "these her long make thing see him two has look more day could go come did number sound no "
    "most people my over know water than call first who may down side been now find any new work "
    "part take get place made live where after back little only round man year came show every "
    "good me give our under name very through just form sentence great think say help low line "
    "summarize translate explain python function error memory GPU kernel tensor batch model"
).split()

PATHS = [
    "/v1/chat/completions",
    "/v1/completions",
    "/v1/chat/completions",
    "/v1/embeddings",
    "/v1/models",
    "/health",
    "/metrics",
]


class Gen:
    def __init__(self, seed):
        self.rng = random.Random(seed)
        self.t = 1732874400.0  # 2024-11-29 10:00:00 UTC
        # Clients: a pool like a real deployment's (load balancers, pods, a few IPv6 hosts).
        r = self.rng
        self.clients = []
        for _ in range(400):
            kind = r.random()
            if kind < 0.15:
                self.clients.append("127.0.0.1")
            elif kind < 0.6:
                self.clients.append("10.%d.%d.%d" % (r.randint(0, 255), r.randint(0, 255), r.randint(1, 254)))
            elif kind < 0.85:
                self.clients.append("%d.%d.%d.%d" % (r.randint(1, 223), r.randint(0, 255), r.randint(0, 255), r.randint(1, 254)))
            else:
                groups = [("%x" % r.randint(0, 0xFFFF)) for _ in range(r.randint(3, 8))]
                if len(groups) < 8:
                    groups.insert(r.randint(1, len(groups) - 1), "")
                self.clients.append(":".join(groups))

    # --- small pieces -------------------------------------------------------------------
    def tick(self, lo=0.0005, hi=0.4):
        self.t += self.rng.uniform(lo, hi)

    def clock(self):
        t = int(self.t)
        return "%02d:%02d:%02d" % (t // 3600 % 24, t // 60 % 60, t % 60)

    def date(self):
        t = int(self.t)
        day = 29 + t // 86400 - 1732874400 // 86400
        return "2024-11-%02d" % min(day, 30)

    def k8s(self):
        # RFC 3339 with nanoseconds, trailing zeros trimmed (kubectl logs --timestamps).
        nanos = "%09d" % int(self.t % 1 * 1e9)
        nanos = nanos.rstrip("0") or "0"
        return "%sT%s.%sZ " % (self.date(), self.clock(), nanos)

    def iso_us(self):
        return "%sT%s.%06dZ" % (self.date(), self.clock(), int(self.t % 1 * 1e6))

    def uuid(self):
        return "%032x" % self.rng.getrandbits(128)

    def client(self):
        host = self.rng.choice(self.clients)
        port = self.rng.randint(1024, 65535)
        return ("[%s]:%d" if ":" in host else "%s:%d") % (host, port)

    def prompt(self):
        # Now and then a long prompt (a pasted document), echoed whole.
        n = self.rng.randint(200, 2000) if self.rng.random() < 0.02 else self.rng.randint(2, 30)
        return " ".join(self.rng.choice(WORDS) for _ in range(n))

    def json_line(self, rid):
        # A structured-logging formatter (python-json-logger, Ray Serve) in front of the server.
        r = self.rng
        return (
            '{"timestamp": "%s", "level": "INFO", "logger": "vllm.entrypoints.openai.api_server", '
            '"message": "%s", "request_id": "%s", "client": "%s", "latency_ms": %.*f, '
            '"prompt_tokens": %d, "completion_tokens": %d}'
            % (self.iso_us(), r.choice(["request finished", "request streamed", "request aborted"]),
               rid, self.client(), r.randint(0, 4), r.uniform(1, 90000), r.randint(1, 30000),
               r.randint(1, 4096))
        )

    def warning(self):
        # A Python warning: the location line, then the source line under it.
        r = self.rng
        site = r.choice([
            ("vllm/entrypoints/openai/serving_chat.py", 218, "UserWarning",
             "The chat template of this model has no system role; the system prompt is merged into the first user message",
             "warnings.warn("),
            ("transformers/tokenization_utils_base.py", 3954, "FutureWarning",
             "`clean_up_tokenization_spaces` was not set. It will be set to `True` by default",
             "warnings.warn("),
            ("torch/nn/modules/module.py", 1747, "UserWarning",
             "Using a target size that is different to the input size (%d) is deprecated" % r.randint(2, 9000),
             "return forward_call(*args, **kwargs)"),
        ])
        return "/usr/local/lib/python3.12/dist-packages/%s:%d: %s: %s\n  %s" % site

    def status(self):
        x = self.rng.random()
        return "200 OK" if x < 0.97 else ("400 Bad Request" if x < 0.99 else "499")

    def sampling(self):
        r = self.rng
        return (
            "SamplingParams(n=1, presence_penalty=0.0, frequency_penalty=0.0, repetition_penalty=1.0, "
            "temperature=%s, top_p=%s, top_k=%d, min_p=0.0, seed=None, stop=[], stop_token_ids=[], "
            "bad_words=[], include_stop_str_in_output=False, ignore_eos=False, max_tokens=%d, min_tokens=0, "
            "logprobs=None, prompt_logprobs=None, skip_special_tokens=True, spaces_between_special_tokens=True, "
            "truncate_prompt_tokens=None, guided_decoding=None, extra_args=None)"
            % (r.choice(["0.0", "0.7", "1.0", "0.2", "0.95"]), r.choice(["1.0", "0.9", "0.95"]),
               r.choice([-1, 20, 40, 50]), r.randint(16, 4096))
        )

    # --- vLLM ---------------------------------------------------------------------------
    def vllm_header(self, v1):
        loc = (lambda f, n: "[%s:%d]" % (f, n)) if v1 else (lambda f, n: "%s:%d]" % (f, n))
        pre = self.k8s if v1 else (lambda: "")
        version = "0.10.1" if v1 else "0.6.4"
        lines = [
            "INFO %s %s %s vLLM API server version %s" % ("11-29", self.clock(), loc("api_server", 1805 if v1 else 585), version),
            "INFO %s %s %s args: Namespace(model='meta-llama/Llama-3.1-8B-Instruct', max_model_len=32768, gpu_memory_utilization=0.9, tensor_parallel_size=1)" % ("11-29", self.clock(), loc("api_server", 1806 if v1 else 586)),
            "INFO %s %s %s Initializing an LLM engine (v%s) with config: model='meta-llama/Llama-3.1-8B-Instruct', dtype=torch.bfloat16, max_seq_len=32768, tensor_parallel_size=1" % ("11-29", self.clock(), loc("llm_engine", 249), version),
            "INFO %s %s %s Starting to load model meta-llama/Llama-3.1-8B-Instruct..." % ("11-29", self.clock(), loc("model_runner", 1072)),
            "INFO %s %s %s Loading model weights took 14.9888 GB" % ("11-29", self.clock(), loc("model_runner", 1077)),
            "INFO %s %s %s Memory profiling results: total_gpu_memory=79.19GiB initial_memory_usage=15.34GiB peak_torch_memory=17.98GiB memory_usage_post_profile=15.35GiB non_torch_memory=0.35GiB kv_cache_size=52.89GiB gpu_memory_utilization=0.90" % ("11-29", self.clock(), loc("worker", 232)),
            "INFO %s %s %s # GPU blocks: 27078, # CPU blocks: 2048" % ("11-29", self.clock(), loc("gpu_executor", 113)),
            "INFO %s %s %s Maximum concurrency for 32768 tokens per request: 13.22x" % ("11-29", self.clock(), loc("gpu_executor", 117)),
            "INFO %s %s %s Capturing the model for CUDA graphs. This may lead to unexpected consequences if the model is not static." % ("11-29", self.clock(), loc("model_runner", 1400)),
            "INFO %s %s %s Graph capturing finished in 15 secs, took 0.53 GiB" % ("11-29", self.clock(), loc("model_runner", 1528)),
            "INFO:     Started server process [1]",
            "INFO:     Waiting for application startup.",
            "INFO:     Application startup complete.",
            "INFO:     Uvicorn running on http://0.0.0.0:8000 (Press CTRL+C to quit)",
        ]
        return "".join(pre() + line + "\n" for line in lines)

    def vllm_body(self, v1, size):
        r = self.rng
        out, n = [], 0
        pre = self.k8s if v1 else (lambda: "")
        next_stats = self.t + 10
        running = r.randint(1, 20)
        while n < size:
            self.tick()
            rid = ("chatcmpl-" if r.random() < 0.8 else "cmpl-") + self.uuid()
            if v1 and r.random() < 0.5:
                rid += "-0"
            c = self.clock()
            if v1:
                a = "INFO 11-29 %s [logger.py:43] Received request %s: prompt: '%s', params: %s, prompt_token_ids: None, prompt_embeds shape: None, lora_request: None." % (c, rid, self.prompt(), self.sampling())
                b = "INFO 11-29 %s [async_llm.py:%d] Added request %s." % (c, r.choice([252, 270, 273]), rid)
            else:
                a = "INFO 11-29 %s logger.py:37] Received request %s: prompt: '%s', params: %s, prompt_token_ids: [128000, %s], lora_request: None, prompt_adapter_request: None." % (c, rid, self.prompt(), self.sampling(), ", ".join(str(r.randint(10, 128000)) for _ in range(r.randint(3, 40))))
                b = "INFO 11-29 %s engine.py:267] Added request %s." % (c, rid)
            lines = [a, b, 'INFO:     %s - "POST %s HTTP/1.1" %s' % (self.client(), r.choice(PATHS[:4]), self.status())]
            if r.random() < 0.05:
                lines.append('INFO:     %s - "GET %s HTTP/1.1" 200 OK' % (self.client(), r.choice(PATHS[4:])))
            if r.random() < 0.6:
                lines.append("INFO 11-29 %s %s Finished request %s." % (self.clock(), "[async_llm.py:%d]" % 396 if v1 else "async_llm_engine.py:%d]" % 140, rid))
            if r.random() < 0.1:
                lines.append(self.json_line(rid))
            if r.random() < 0.004:
                lines.extend(self.warning().split("\n"))
            if self.t >= next_stats:
                next_stats = self.t + r.uniform(5, 10)
                running = max(0, min(256, running + r.randint(-5, 5)))
                if v1:
                    lines.append("INFO 11-29 %s [loggers.py:123] Engine 000: Avg prompt throughput: %.1f tokens/s, Avg generation throughput: %.1f tokens/s, Running: %d reqs, Waiting: %d reqs, GPU KV cache usage: %.1f%%, Prefix cache hit rate: %.1f%%" % (self.clock(), r.uniform(0, 25000), r.uniform(0, 3000), running, r.choice([0, 0, 0, r.randint(1, 40)]), r.uniform(0, 99), r.uniform(0, 90)))
                else:
                    lines.append("INFO 11-29 %s metrics.py:349] Avg prompt throughput: %.1f tokens/s, Avg generation throughput: %.1f tokens/s, Running: %d reqs, Swapped: 0 reqs, Pending: %d reqs, GPU KV cache usage: %.1f%%, CPU KV cache usage: 0.0%%." % (self.clock(), r.uniform(0, 25000), r.uniform(0, 3000), running, r.choice([0, 0, 0, r.randint(1, 40)]), r.uniform(0, 99)))
            for line in lines:
                s = pre() + line + "\n"
                out.append(s)
                n += len(s)
        return out, n

    def vllm_tail(self, v1):
        pre = self.k8s if v1 else (lambda: "")
        if v1:
            head = "ERROR 11-29 %s [core.py:700] " % self.clock()
            lines = [head + "EngineCore encountered a fatal error.", head + "Traceback (most recent call last):"]
        else:
            head = "ERROR 11-29 %s async_llm_engine.py:64] " % self.clock()
            lines = [head + "Engine background task failed", head + "Traceback (most recent call last):"]
        lines += [
            head + '  File "/usr/local/lib/python3.12/dist-packages/vllm/worker/model_runner.py", line 1654, in execute_model',
            head + "    hidden_or_intermediate_states = model_executable(",
            head + '  File "/usr/local/lib/python3.12/dist-packages/torch/nn/modules/module.py", line 1736, in _wrapped_call_impl',
            head + "    return self._call_impl(*args, **kwargs)",
            head + OOM,
            "INFO:     Shutting down",
            "INFO:     Finished server process [1]",
        ]
        return "".join(pre() + line + "\n" for line in lines)

    # --- SGLang -------------------------------------------------------------------------
    def sglang_header(self):
        d = lambda: "[%s %s] " % (self.date(), self.clock())
        lines = [
            d() + "server_args=ServerArgs(model_path='Qwen/Qwen2.5-7B-Instruct', tokenizer_path='Qwen/Qwen2.5-7B-Instruct', dtype='auto', mem_fraction_static=0.88, max_running_requests=None, tp_size=1, chunked_prefill_size=8192, port=30000)",
            d()[:-2] + " TP0] Init torch distributed begin.",
            d()[:-2] + " TP0] Load weight begin. avail mem=78.81 GB",
            d()[:-2] + " TP0] Load weight end. type=Qwen2ForCausalLM, dtype=torch.bfloat16, avail mem=64.38 GB, mem usage=14.43 GB.",
            d()[:-2] + " TP0] KV Cache is allocated. #tokens: 1016470, K size: 27.15 GB, V size: 27.15 GB",
            d()[:-2] + " TP0] Memory pool end. avail mem=8.70 GB",
            d()[:-2] + " TP0] Capture cuda graph begin. This can take up to several minutes. avail mem=8.13 GB",
            d()[:-2] + " TP0] Capture cuda graph end. Time elapsed: 12.85 s. avail mem=7.46 GB. mem usage=0.67 GB.",
            d()[:-2] + " TP0] max_total_num_tokens=1016470, chunked_prefill_size=8192, max_prefill_tokens=16384, max_running_requests=4096, context_len=32768",
            d() + "INFO:     Started server process [3291]",
            d() + "INFO:     Uvicorn running on http://0.0.0.0:30000 (Press CTRL+C to quit)",
            d() + "The server is fired up and ready to roll!",
        ]
        return "".join(line + "\n" for line in lines)

    def sglang_body(self, size):
        r = self.rng
        out, n = [], 0
        running, tokens = r.randint(1, 30), r.randint(1000, 90000)
        while n < size:
            self.tick(0.001, 0.2)
            stamp = "[%s %s TP0] " % (self.date(), self.clock())
            x = r.random()
            if x < 0.25:
                new = r.randint(12, 8192)
                line = stamp + "Prefill batch. #new-seq: %d, #new-token: %d, #cached-token: %d, token usage: %.2f, #running-req: %d, #queue-req: %d, " % (r.randint(1, 8), new, r.choice([0, r.randint(0, new)]), r.uniform(0, 0.99), running, r.choice([0, 0, r.randint(1, 300)]))
            elif x < 0.8:
                running = max(1, min(4096, running + r.randint(-3, 3)))
                tokens = max(100, tokens + r.randint(-2000, 2000))
                line = stamp + "Decode batch. #running-req: %d, #token: %d, token usage: %.2f, cuda graph: %s, gen throughput (token/s): %.2f, #queue-req: %d, " % (running, tokens, r.uniform(0, 0.99), r.choice(["True", "True", "False"]), r.uniform(10, 9000), r.choice([0, 0, r.randint(1, 300)]))
            else:
                line = "[%s %s] INFO:     %s - \"POST %s HTTP/1.1\" %s" % (self.date(), self.clock(), self.client(), r.choice(PATHS[:3]), self.status())
            line += "\n"
            out.append(line)
            n += len(line)
        return out, n

    # --- TGI ----------------------------------------------------------------------------
    def tgi_header(self):
        t = self.iso_us
        lines = [
            t() + "  INFO text_generation_launcher: Args {\n    model_id: \"mistralai/Mistral-7B-Instruct-v0.3\",\n    revision: None,\n    sharded: None,\n    num_shard: Some(\n        1,\n    ),\n    quantize: None,\n    max_input_tokens: Some(\n        8192,\n    ),\n    max_total_tokens: Some(\n        16384,\n    ),\n    cuda_memory_fraction: 1.0,\n    port: 80,\n}",
            t() + "  INFO text_generation_launcher: Starting check and download process",
            t() + "  INFO download: text_generation_launcher: Successfully downloaded weights for mistralai/Mistral-7B-Instruct-v0.3",
            t() + "  INFO shard-manager: text_generation_launcher: Starting shard rank=0",
            t() + "  INFO shard-manager: text_generation_launcher: Shard ready in 31.41421356s rank=0",
            t() + "  INFO text_generation_launcher: Starting Webserver",
            t() + "  INFO text_generation_router_v3: backends/v3/src/lib.rs:125: Warming up model",
            t() + "  INFO text_generation_launcher: KV-cache blocks: 52000, size: 16",
            t() + "  INFO text_generation_launcher: Cuda Graphs are enabled for sizes [32, 16, 8, 4, 2, 1]",
            t() + "  INFO text_generation_router_v3: backends/v3/src/lib.rs:137: Setting max batch total tokens to 832000",
            t() + "  INFO text_generation_router::server: router/src/server.rs:2340: Connected",
        ]
        return "".join(line + "\n" for line in lines)

    def tgi_body(self, size):
        r = self.rng
        out, n = [], 0
        while n < size:
            self.tick(0.01, 0.5)
            new_tokens = r.randint(1, 2048)
            total = r.uniform(0.05, 40)
            per = total / new_tokens
            params = (
                "GenerateParameters { adapter_id: None, best_of: None, temperature: %s, repetition_penalty: %s, "
                "frequency_penalty: None, top_k: %s, top_p: %s, typical_p: None, do_sample: %s, max_new_tokens: Some(%d), "
                "return_full_text: Some(false), stop: [], truncate: None, watermark: false, details: false, "
                "decoder_input_details: false, seed: None, top_n_tokens: None, grammar: None }"
                % (r.choice(["None", "Some(0.7)", "Some(1.0)", "Some(0.01)"]), r.choice(["None", "Some(1.03)"]),
                   r.choice(["None", "Some(10)", "Some(50)"]), r.choice(["None", "Some(0.95)", "Some(0.9)"]),
                   r.choice(["false", "true"]), r.randint(16, 4096))
            )
            span = (
                'chat_completions{parameters=%s total_time="%.9fs" validation_time="%.3fµs" queue_time="%.3fµs" '
                'inference_time="%.9fs" time_per_token="%.6fms" seed="%s"}'
                % (params, total, r.uniform(50, 900), r.uniform(20, 90000), total * 0.98, per * 1000,
                   r.choice(["None", "Some(%d)" % r.getrandbits(63)]))
            )
            line = "%s  INFO %s: text_generation_router::server: router/src/server.rs:%d: Success\n" % (self.iso_us(), span, r.choice([402, 637, 1208]))
            out.append(line)
            n += len(line)
            if r.random() < 0.1:
                line = "%s  WARN text_generation_router::infer: router/src/infer/mod.rs:%d: Invalid request: Input validation error: `inputs` tokens + `max_new_tokens` must be <= %d. Given: %d `inputs` tokens and %d `max_new_tokens`\n" % (self.iso_us(), r.randint(100, 400), 16384, r.randint(10000, 16000), r.randint(1000, 9000))
                out.append(line)
                n += len(line)
        return out, n

    # --- llama.cpp ----------------------------------------------------------------------
    def llamacpp_header(self):
        lines = [
            "build: 4589 (eb7cf15a) with cc (Ubuntu 11.4.0-1ubuntu1~22.04) 11.4.0 for x86_64-linux-gnu",
            "ggml_cuda_init: found 1 CUDA devices:",
            "  Device 0: NVIDIA H100 80GB HBM3, compute capability 9.0, VMM: yes",
            "llama_model_loader: loaded meta data with 33 key-value pairs and 292 tensors from /models/llama-3.1-8b-instruct-q8_0.gguf (version GGUF V3 (latest))",
            "llama_model_loader: - kv   1:                               general.name str              = Meta Llama 3.1 8B Instruct",
            "print_info: file type   = Q8_0",
            "load_tensors: offloaded 33/33 layers to GPU",
            "load_tensors:        CUDA0 model buffer size =  7605.33 MiB",
            "llama_context: n_ctx         = 32768",
            "llama_context: n_batch       = 2048",
            "llama_kv_cache_unified: size = 4096.00 MiB ( 32768 cells,  32 layers,  1 seqs), K (f16): 2048.00 MiB, V (f16): 2048.00 MiB",
            "main: server is listening on http://0.0.0.0:8080 - starting the main loop",
            "srv  update_slots: all slots are idle",
        ]
        return "".join(line + "\n" for line in lines)

    def llamacpp_body(self, size):
        r = self.rng
        out, n = [], 0
        task = r.randint(0, 1000)
        while n < size:
            task += r.randint(1, 3)
            slot = r.randint(0, 3)
            prompt = r.randint(5, 30000)
            gen = r.randint(1, 2048)
            head = "slot %%12s: id %2d | task %d | " % (slot, task)
            pe, ge = r.uniform(5, 9000), r.uniform(10, 90000)
            lines = [
                head % "launch_slot_" + "processing task",
                head % "update_slots" + "new prompt, n_ctx_slot = 32768, n_keep = 0, n_prompt_tokens = %d" % prompt,
                head % "update_slots" + "kv cache rm [%d, end)" % r.choice([0, r.randint(0, prompt)]),
                head % "update_slots" + "prompt processing progress, n_past = %d, n_tokens = %d, progress = %.6f" % (prompt, prompt, 1.0),
                head % "update_slots" + "prompt done, n_past = %d, n_tokens = %d" % (prompt, prompt),
                head % "release" + "stop processing: n_past = %d, truncated = 0" % (prompt + gen),
                head % "print_timing" + "",
                "prompt eval time = %10.2f ms / %5d tokens (%8.2f ms per token, %8.2f tokens per second)" % (pe, prompt, pe / prompt, prompt * 1000 / pe),
                "       eval time = %10.2f ms / %5d tokens (%8.2f ms per token, %8.2f tokens per second)" % (ge, gen, ge / gen, gen * 1000 / ge),
                "      total time = %10.2f ms / %5d tokens" % (pe + ge, prompt + gen),
                "srv  log_server_r: request: POST %s %s 200" % (r.choice(["/completion", "/v1/chat/completions", "/v1/completions"]), self.client().rsplit(":", 1)[0].strip("[]")),
            ]
            if r.random() < 0.5:
                lines.append("srv  update_slots: all slots are idle")
            for line in lines:
                line += "\n"
                out.append(line)
                n += len(line)
        return out, n

    # --- Ollama -------------------------------------------------------------------------
    def ollama_header(self):
        t = lambda: "time=%sT%s.%03dZ level=INFO " % (self.date(), self.clock(), int(self.t % 1 * 1000))
        lines = [
            t() + 'source=routes.go:1259 msg="Listening on [::]:11434 (version 0.5.7)"',
            t() + 'source=gpu.go:226 msg="looking for compatible GPUs"',
            t() + 'source=types.go:131 msg="inference compute" id=GPU-6a2b1f0e library=cuda variant=v12 compute=9.0 driver=12.4 name="NVIDIA H100 80GB HBM3" total="79.1 GiB" available="78.6 GiB"',
            t() + 'source=server.go:376 msg="starting llama server" cmd="/usr/lib/ollama/runners/cuda_v12_avx/ollama_llama_server runner --model /root/.ollama/models/blobs/sha256-667b0c1932bc --ctx-size 8192 --batch-size 512 --n-gpu-layers 33 --threads 16 --parallel 4 --port 41729"',
            t() + 'source=server.go:601 msg="llama runner started in 2.51 seconds"',
        ]
        return "".join(line + "\n" for line in lines)

    def ollama_body(self, size):
        r = self.rng
        out, n = [], 0
        while n < size:
            self.tick(0.01, 2.0)
            x = r.random()
            if x < 0.7:
                took = r.choice(["%.6fµs" % r.uniform(20, 999), "%.6fms" % r.uniform(1, 999), "%.9fs" % r.uniform(1, 90)])
                host = self.client().rsplit(":", 1)[0].strip("[]")
                line = '[GIN] %s - %s | %3d | %14s | %15s | %-7s "%s"' % (
                    self.date().replace("-", "/"), self.clock(), r.choice([200, 200, 200, 200, 400, 499, 500]), took, host,
                    r.choice(["POST", "POST", "GET", "HEAD"]), r.choice(["/api/chat", "/api/generate", "/api/tags", "/v1/chat/completions", "/api/embed", "/"]))
            elif x < 0.85:
                line = 'time=%sT%s.%03dZ level=DEBUG source=sched.go:%d msg="context for request finished" runner.name=registry.ollama.ai/library/%s runner.inference=cuda runner.devices=1 runner.size="%.1f GiB" runner.vram="%.1f GiB" runner.num_ctx=%d' % (
                    self.date(), self.clock(), int(self.t % 1 * 1000), r.choice([407, 466, 575]), r.choice(["llama3.1:8b", "qwen2.5:32b", "mistral:7b"]), r.uniform(4, 40), r.uniform(4, 40), r.choice([2048, 8192, 32768]))
            else:
                line = 'time=%sT%s.%03dZ level=INFO source=server.go:%d msg="%s"' % (
                    self.date(), self.clock(), int(self.t % 1 * 1000), r.choice([594, 601, 1043]), r.choice(["waiting for server to become available", "llama runner started in %.2f seconds" % r.uniform(1, 30), "loaded runners count=%d" % r.randint(1, 4)]))
            line += "\n"
            out.append(line)
            n += len(line)
        return out, n

    # --- training (Trainer, Lightning, DeepSpeed, Megatron) ------------------------------
    def trainer_header(self):
        lines = [
            "[2024-11-29 10:00:01,120] [INFO] [real_accelerator.py:219:get_accelerator] Setting ds_accelerator to cuda (auto detect)",
            "[2024-11-29 10:00:04,881] [INFO] [comm.py:652:init_distributed] cdb=None",
            "***** Running training *****",
            "  Num examples = 1,204,331",
            "  Num Epochs = 3",
            "  Instantaneous batch size per device = 8",
            "  Total optimization steps = 56,453",
            "  Number of trainable parameters = 8,030,261,248",
        ]
        return "".join(line + "\n" for line in lines)

    def trainer_body(self, size):
        r = self.rng
        out, n, step, epoch = [], 0, 0, 0
        while n < size:
            step += 1
            total = 56453
            rate = r.uniform(0.5, 4)
            x = r.random()
            if x < 0.45:
                line = "%3d%%|%-10s| %d/%d [%02d:%02d<%02d:%02d, %5.2fit/s]" % (
                    step * 100 // total, "█" * (step * 10 // total), step, total, step // 60 % 60, step % 60, r.randint(0, 59), r.randint(0, 59), rate)
            elif x < 0.6:
                line = "{'loss': %.4f, 'grad_norm': %.4f, 'learning_rate': %.4e, 'epoch': %.2f}" % (
                    r.uniform(0.2, 3), r.uniform(0.1, 9), r.uniform(1e-6, 5e-5), step / 18818)
            elif x < 0.75:
                line = "Epoch %d:  %2d%%|%-10s| %d/%d [%02d:%02d<%02d:%02d, %5.2fit/s, v_num=%d, train_loss=%.3f]" % (
                    epoch, step * 100 // total, "█" * (step * 10 // total), step, total, r.randint(0, 59), r.randint(0, 59), r.randint(0, 59), r.randint(0, 59), rate, r.randint(0, 9), r.uniform(0.1, 3))
            elif x < 0.87:
                line = "[%s %s,%03d] [INFO] [logging.py:128:log_dist] [Rank 0] step=%d, skipped=%d, lr=[%.6e], mom=[(0.9, 0.999)]" % (
                    self.date(), self.clock(), r.randint(0, 999), step, r.choice([0, 0, r.randint(1, 9)]), r.uniform(1e-6, 5e-5))
            elif x < 0.95:
                line = " [%s %s] iteration %8d/%8d | consumed samples: %12d | elapsed time per iteration (ms): %.1f | learning rate: %.3E | global batch size: %5d | lm loss: %.6E | loss scale: 1.0 | grad norm: %.3f | number of skipped iterations: %3d | number of nan iterations: %3d |" % (
                    self.date(), self.clock(), step, 500000, step * 512, r.uniform(300, 4000), r.uniform(1e-5, 3e-4), 512, r.uniform(1.5, 9), r.uniform(0.1, 5), 0, 0)
            else:
                line = "STEP %d loss=%.4f lr=%.2e tokens/s=%d mem_alloc=%.1fGiB mem_reserved=%.1fGiB time=%.3fs" % (
                    step, r.uniform(0.2, 3), r.uniform(1e-6, 5e-5), r.randint(1000, 90000), r.uniform(10, 70), r.uniform(10, 79), r.uniform(0.1, 2))
            self.tick(0.05, 2)
            line += "\n"
            out.append(line)
            n += len(line)
        return out, n


def write_section(gen, engine, size, failing, write):
    if engine in ("vllm-v0", "vllm-v1"):
        v1 = engine == "vllm-v1"
        write(gen.vllm_header(v1))
        body = lambda s: gen.vllm_body(v1, s)
    else:
        write(getattr(gen, engine + "_header")())
        body = getattr(gen, engine + "_body")
    written = 0
    while written < size:
        lines, n = body(min(4 << 20, size - written))
        write("".join(lines))
        written += n
    if failing:
        write(gen.vllm_tail(engine == "vllm-v1") if engine.startswith("vllm") else
              "Traceback (most recent call last):\n  File \"/app/server.py\", line 88, in run\n    out = model(batch)\n" + OOM + "\n")


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--engine", default="mixed", choices=ENGINES + OTHERS + ["mixed"])
    parser.add_argument("--size-mib", type=int, default=1024)
    parser.add_argument("--size-kib", type=int, help="the size in KiB instead (for excerpts)")
    parser.add_argument("--no-failure", action="store_true", help="without the failure at the end")
    parser.add_argument("--seed", type=int, default=2024)
    parser.add_argument("output")
    args = parser.parse_args()
    gen = Gen(args.seed)
    size = args.size_kib << 10 if args.size_kib else args.size_mib << 20
    engines = ENGINES if args.engine == "mixed" else [args.engine]
    with open(args.output, "w", encoding="utf-8", newline="\n") as out:
        for i, engine in enumerate(engines):
            failing = i == len(engines) - 1 and not args.no_failure
            write_section(gen, engine, size // len(engines), failing, out.write)


if __name__ == "__main__":
    sys.exit(main())
