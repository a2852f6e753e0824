#!/usr/bin/env python3
"""A small OpenAI-compatible server doing real GPU inference, for `oomdoc probe` device tests.

python3 stdlib http.server + torch: a randomly initialised Llama-style transformer (hand-written,
so it does not depend on a transformers release), byte-level "tokenizer", greedy decoding of a
few tokens without a KV cache. Endpoints: GET /v1/models, POST /v1/completions,
POST /v1/chat/completions; a thread per connection, all GPU work on one worker thread. No network, no weights to download.

--leak keeps, after every request, a reference to a 16 MiB tensor holding that request's last
hidden states (padded), as a server that caches per-request activations by mistake would:
GPU memory then grows with every request, for ever. 16 MiB is above the caching allocator's
10 MiB "large segment" limit, so each leaked tensor gets its own 16 MiB (2 MiB-rounded)
segment once the cached free blocks are used up: NVML sees a clean +16 MiB per request.
"""

import argparse
import json
import queue
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import torch
import torch.nn.functional as F

VOCAB = 256 + 2  # bytes + BOS + EOS
CONTEXT = 4096
LEAK_BYTES = 16 << 20


class Block(torch.nn.Module):
    def __init__(self, dim, heads):
        super().__init__()
        self.heads = heads
        self.norm1 = torch.nn.RMSNorm(dim)
        self.qkv = torch.nn.Linear(dim, 3 * dim, bias=False)
        self.out = torch.nn.Linear(dim, dim, bias=False)
        self.norm2 = torch.nn.RMSNorm(dim)
        self.up = torch.nn.Linear(dim, 4 * dim, bias=False)
        self.down = torch.nn.Linear(4 * dim, dim, bias=False)

    def forward(self, x):
        b, t, d = x.shape
        q, k, v = self.qkv(self.norm1(x)).view(b, t, 3, self.heads, d // self.heads).unbind(2)
        q, k, v = (y.transpose(1, 2) for y in (q, k, v))
        a = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        x = x + self.out(a.transpose(1, 2).reshape(b, t, d))
        return x + self.down(F.silu(self.up(self.norm2(x))))


class TinyLM(torch.nn.Module):
    def __init__(self, dim=512, layers=6, heads=8):
        super().__init__()
        self.embed = torch.nn.Embedding(VOCAB, dim)
        self.pos = torch.nn.Embedding(CONTEXT, dim)
        self.blocks = torch.nn.ModuleList(Block(dim, heads) for _ in range(layers))
        self.norm = torch.nn.RMSNorm(dim)
        self.head = torch.nn.Linear(dim, VOCAB, bias=False)

    def forward(self, ids):
        x = self.embed(ids) + self.pos(torch.arange(ids.shape[1], device=ids.device))
        for block in self.blocks:
            x = block(x)
        hidden = self.norm(x)
        return self.head(hidden), hidden


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int, default=18431)
    parser.add_argument("--leak", action="store_true")
    args = parser.parse_args()

    torch.manual_seed(0)
    device = torch.device("cuda")
    model = TinyLM().to(device=device, dtype=torch.bfloat16).eval()
    leaked = []

    @torch.inference_mode()
    def generate(prompt, max_tokens):
        ids = [256] + list(prompt.encode("utf-8"))[: CONTEXT - max_tokens - 1]
        tokens = torch.tensor([ids], device=device)
        out = []
        hidden = None
        for _ in range(max_tokens):
            logits, hidden = model(tokens)
            next_id = int(logits[0, -1].argmax())
            out.append(next_id)
            tokens = torch.cat([tokens, torch.tensor([[next_id]], device=device)], dim=1)
        torch.cuda.synchronize()
        if args.leak and hidden is not None:
            keep = torch.zeros(LEAK_BYTES // 2, dtype=torch.bfloat16, device=device)
            flat = hidden.reshape(-1)[: keep.numel()]
            keep[: flat.numel()].copy_(flat)
            leaked.append(keep)  # the bug: a reference kept after the request ended
        text = bytes(t for t in out if t < 256).decode("utf-8", errors="replace")
        return text, len(ids), len(out)

    # All GPU work on one thread: HTTP threads come and go, and CUDA library handles and
    # workspaces are per thread; one worker keeps them fixed, so only the model's own
    # memory behaviour shows.
    jobs = queue.Queue()

    def worker():
        while True:
            prompt, max_tokens, answer = jobs.get()
            try:
                answer.put(generate(prompt, max_tokens))
            except Exception as error:  # reported to the client as HTTP 500
                answer.put(error)

    threading.Thread(target=worker, daemon=True).start()

    def run_on_gpu(prompt, max_tokens):
        answer = queue.Queue(maxsize=1)
        jobs.put((prompt, max_tokens, answer))
        result = answer.get()
        if isinstance(result, Exception):
            raise result
        return result

    run_on_gpu("warm the kernels", 2)

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *a):
            pass

        def reply(self, status, body):
            data = json.dumps(body).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def do_GET(self):
            if self.path == "/v1/models":
                self.reply(200, {"object": "list", "data": [
                    {"id": "tiny-random", "object": "model", "max_model_len": CONTEXT}]})
            else:
                self.reply(404, {"error": {"message": "not found"}})

        def do_POST(self):
            length = int(self.headers.get("Content-Length", "0"))
            try:
                request = json.loads(self.rfile.read(length) or b"{}")
            except ValueError:
                return self.reply(400, {"error": {"message": "bad JSON"}})
            chat = self.path == "/v1/chat/completions"
            if self.path != "/v1/completions" and not chat:
                return self.reply(404, {"error": {"message": "not found"}})
            prompt = request["messages"][-1]["content"] if chat else request.get("prompt", "")
            max_tokens = max(1, min(int(request.get("max_tokens", 16)), 64))
            try:
                text, prompt_tokens, completion_tokens = run_on_gpu(prompt, max_tokens)
            except Exception as error:
                return self.reply(500, {"error": {"message": str(error)}})
            choice = ({"index": 0, "message": {"role": "assistant", "content": text},
                       "finish_reason": "length"} if chat else
                      {"index": 0, "text": text, "finish_reason": "length"})
            self.reply(200, {"id": f"cmpl-{time.time_ns()}", "object": "text_completion",
                             "model": "tiny-random", "choices": [choice],
                             "usage": {"prompt_tokens": prompt_tokens,
                                       "completion_tokens": completion_tokens}})

    server = ThreadingHTTPServer(("127.0.0.1", args.port), Handler)
    print(f"ready on 127.0.0.1:{args.port} leak={args.leak} "
          f"params={sum(p.numel() for p in model.parameters())}", flush=True)
    server.serve_forever()


if __name__ == "__main__":
    sys.exit(main())
