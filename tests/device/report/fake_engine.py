#!/usr/bin/env python3
"""A stand-in for `vllm serve` on a real GPU, for the `oomdoc report`/`oomdoc diff` device test.

It prints vLLM 0.10-style lines (templates in shared docs/formats.md §3) and really allocates GPU
memory phase by phase: "weights" (60 GiB), a profiling transient, a "KV cache" sized from
--gpu-memory-utilization like vLLM does, then, unless --enforce-eager, a "CUDA graph capture" of
6 GiB in 512 MiB steps. With --gpu-memory-utilization 0.98 the capture runs out of memory (a real
torch.OutOfMemoryError, traceback and exit 1); with 0.90 or --enforce-eager it becomes "ready",
logs three served requests and exits 0. No vLLM needed; torch only.
"""
import argparse
import sys
import time

import torch

GIB = 1 << 30
MODEL = "Qwen/Qwen2.5-32B-Instruct"


def log(message, process="EngineCore_0 pid=3010", level="INFO", where="gpu_model_runner.py:1"):
    stamp = time.strftime("%m-%d %H:%M:%S")
    print(f"({process}) {level} {stamp} [{where}] {message}", flush=True)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--gpu-memory-utilization", type=float, default=0.9)
    parser.add_argument("--max-model-len", type=int, default=32768)
    parser.add_argument("--enforce-eager", action="store_true")
    args = parser.parse_args()

    log("vLLM API server version 0.10.1.1", process="APIServer pid=2817", where="api_server.py:1805")
    log(f"Initializing a V1 LLM engine (v0.10.1.1) with config: model='{MODEL}', speculative_config=None, "
        f"tokenizer='{MODEL}', dtype=torch.bfloat16, max_seq_len={args.max_model_len}, quantization=None, "
        f"enforce_eager={args.enforce_eager}, kv_cache_dtype=auto", where="core.py:74")
    time.sleep(1.0)
    log(f"Starting to load model {MODEL}...", where="gpu_model_runner.py:1953")
    start = time.time()
    weights = []
    for shard in range(16):
        weights.append(torch.empty(int(3.75 * GIB), dtype=torch.uint8, device="cuda"))
        weights[-1].fill_(1)
        print(f"Loading safetensors checkpoint shards: {100 * (shard + 1) // 16:3d}% Completed | {shard + 1}/16 "
              f"[00:0{shard // 4}<00:00,  4.00it/s]", file=sys.stderr, flush=True)
        time.sleep(0.1)
    took = time.time() - start
    log(f"Loading weights took {took:.2f} seconds", where="default_loader.py:262")
    log(f"Model loading took {torch.cuda.memory_allocated() / GIB:.4f} GiB and {took:.6f} seconds",
        where="gpu_model_runner.py:2007")
    time.sleep(1.0)

    # Profiling: a dummy forward pass needs a short transient peak.
    peak = torch.empty(4 * GIB, dtype=torch.uint8, device="cuda")
    peak.fill_(2)
    torch.cuda.synchronize()
    time.sleep(0.05)
    del peak
    torch.cuda.empty_cache()
    time.sleep(1.0)

    free, total = torch.cuda.mem_get_info()
    used = total - free
    kv_bytes = int(args.gpu_memory_utilization * total) - used - GIB
    kv = torch.empty(max(kv_bytes, 0), dtype=torch.uint8, device="cuda")
    log(f"Available KV cache memory: {kv_bytes / GIB:.2f} GiB", where="gpu_worker.py:276")
    tokens = kv_bytes // (256 * 1024)
    log(f"GPU KV cache size: {tokens:,} tokens", where="kv_cache_utils.py:849")
    log(f"Maximum concurrency for {args.max_model_len:,} tokens per request: {tokens / args.max_model_len:.2f}x",
        where="kv_cache_utils.py:853")
    time.sleep(1.0)

    graphs = []
    if not args.enforce_eager:
        print("Capturing CUDA graphs (mixed prefill-decode, PIECEWISE):   0%|          | 0/67", file=sys.stderr,
              flush=True)
        start = time.time()
        for _ in range(12):
            graphs.append(torch.empty(GIB // 2, dtype=torch.uint8, device="cuda"))
            graphs[-1].fill_(3)
            time.sleep(0.1)
        log(f"Graph capturing finished in {time.time() - start:.0f} secs, took 6.00 GiB",
            where="gpu_model_runner.py:2708")
    log("init engine (profile, create kv cache, warmup model) took 9.00 seconds", where="core.py:214")
    log("Starting vLLM API server 0 on http://0.0.0.0:8000", process="APIServer pid=2817",
        where="api_server.py:1857")
    print("(APIServer pid=2817) INFO:     Application startup complete.", flush=True)
    for port in range(3):
        time.sleep(0.5)
        print(f"(APIServer pid=2817) INFO:     127.0.0.1:{40112 + port} - \"POST /v1/chat/completions HTTP/1.1\" 200 OK",
              flush=True)
    time.sleep(1.0)
    del weights, kv, graphs


if __name__ == "__main__":
    main()
