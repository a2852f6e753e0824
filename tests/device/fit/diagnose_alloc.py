"""Why does memory_allocated() grow by ~2% more than the safetensors bytes when loading with
safetensors.torch.load_file(device="cuda")? Builds one small Llama (bf16), saves it, and measures
the same file loaded three ways. Prints one line per measurement."""
import os, sys, tempfile
import torch
from safetensors.torch import load_file, save_file
from safetensors import safe_open
from transformers import LlamaConfig, AutoModelForCausalLM

d = tempfile.mkdtemp()
config = LlamaConfig(vocab_size=32000, hidden_size=512, intermediate_size=1536, num_hidden_layers=4,
                     num_attention_heads=8, num_key_value_heads=2)
model = AutoModelForCausalLM.from_config(config).to(torch.bfloat16)
model.save_pretrained(d)
path = os.path.join(d, "model.safetensors")
raw = 0
with safe_open(path, framework="pt", device="cpu") as f:
    names = list(f.keys())
    for n in names:
        t = f.get_tensor(n)
        raw += t.numel() * t.element_size()
print(f"tensors {len(names)} raw bytes {raw}")

def measure(label, fn):
    torch.cuda.synchronize(); torch.cuda.empty_cache()
    before = torch.cuda.memory_allocated()
    req_before = torch.cuda.memory_stats().get("requested_bytes.all.current", 0)
    held = fn()
    torch.cuda.synchronize()
    after = torch.cuda.memory_allocated()
    req_after = torch.cuda.memory_stats().get("requested_bytes.all.current", 0)
    storages = {}
    for t in held.values():
        s = t.untyped_storage()
        storages[s.data_ptr()] = s.nbytes()
    print(f"{label}: allocated +{after - before} requested +{req_after - req_before} "
          f"unique storages {len(storages)} storage bytes {sum(storages.values())} (raw {raw}, diff {after - before - raw})")
    del held

measure("load_file(device=cuda)", lambda: load_file(path, device="cuda"))
measure("load_file(cpu) then .to(cuda) each", lambda: {k: v.to("cuda") for k, v in load_file(path).items()})
measure("load_file(device=cuda) again", lambda: load_file(path, device="cuda"))
def per_tensor():
    out = {}
    with safe_open(path, framework="pt", device="cuda") as f:
        for n in f.keys():
            out[n] = f.get_tensor(n)
    return out
measure("safe_open(device=cuda).get_tensor each", per_tensor)
