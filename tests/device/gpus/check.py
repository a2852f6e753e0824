#!/usr/bin/env python3
"""Checks for the oomdoc `gpus` device tests. Each subcommand prints `ok:`/`FAIL:` lines and
exits 1 when a check fails.

  agree OOMDOC_JSON NVIDIA_SMI_XML     same UUIDs, bus ids, totals (NVML bytes vs MiB, ±1 MiB)
  holder OOMDOC_JSON SMI_CSV READY...  each holder's PID shows on its UUID with its bytes (±1%)
  ordinals OOMDOC_JSON TORCH_JSON      cuda_ordinal → UUID matches torch.cuda order
  bench BENCH_JSON                     memory() ≥ 1000 calls/s, inventory median < 50 ms
  same A.json B.json                   two `gpus --json` documents equal but for `source`
  cudatotal OOMDOC_JSON READY          total − reserved = torch mem_get_info total
"""
import json
import sys
import xml.etree.ElementTree as ET

MIB = 1 << 20
failures = 0


def check(condition, message):
    global failures
    print(("ok: " if condition else "FAIL: ") + message)
    if not condition:
        failures += 1


def load(path):
    with open(path) as f:
        return json.load(f)


def mib(text):
    number, unit = text.split()
    assert unit == "MiB", text
    return int(number) * MIB


def agree(oomdoc_path, xml_path):
    doc = load(oomdoc_path)
    root = ET.parse(xml_path).getroot()
    gpus = root.findall("gpu")
    check(doc["source"] == "nvml", f"source is NVML ({doc['source']})")
    check(len(doc["devices"]) == len(gpus), f"{len(doc['devices'])} devices from NVML, {len(gpus)} from nvidia-smi")
    check(doc["driver_version"] == root.findtext("driver_version"), f"driver {doc['driver_version']}")
    for device, gpu in zip(doc["devices"], gpus):
        uuid = gpu.findtext("uuid")
        check(device["uuid"] == uuid, f"UUID {device['uuid']} == {uuid}")
        bus = gpu.findtext("pci/pci_bus_id")
        check(device["pci_bus_id"] == bus, f"bus id {device['pci_bus_id']} == {bus}")
        total = mib(gpu.findtext("fb_memory_usage/total"))
        # nvidia-smi prints whole MiB (floor).
        check(abs(device["memory"]["total_bytes"] - total) < MIB,
              f"total {device['memory']['total_bytes']} B ~ {total} B (nvidia-smi)")
        reserved = gpu.findtext("fb_memory_usage/reserved")
        if reserved:
            check(abs((device["memory"]["reserved_bytes"] or 0) - mib(reserved)) < MIB,
                  f"reserved {device['memory']['reserved_bytes']} B ~ {reserved}")
        m = device["memory"]
        check(m["reserved_bytes"] + m["used_bytes"] + m["free_bytes"] == m["total_bytes"],
              "NVML v2: reserved + used + free == total")


def holder(oomdoc_path, csv_path, *ready_paths):
    doc = load(oomdoc_path)
    smi = {}
    with open(csv_path) as f:
        for line in f.read().strip().splitlines()[1:]:
            pid, uuid, used = [part.strip() for part in line.split(",")]
            smi[(int(pid), uuid)] = int(used.split()[0]) * MIB
    for ready in ready_paths:
        info = load(ready)
        pid, uuid = info["pid"], info["uuid"]
        found = [(d, p) for d in doc["devices"] for p in d["processes"] if p["pid"] == pid]
        check(len(found) == 1, f"PID {pid} listed once ({len(found)})")
        if not found:
            continue
        device, process = found[0]
        check(device["uuid"] == uuid, f"PID {pid} on {device['uuid']}, torch says {uuid}")
        used = process["used_bytes"] or 0
        check(used >= info["reserved_bytes"], f"PID {pid} uses {used} B >= torch reserved {info['reserved_bytes']} B")
        if (pid, uuid) in smi:
            expected = smi[(pid, uuid)]
            check(abs(used - expected) <= 0.01 * expected,
                  f"PID {pid}: {used} B within 1% of nvidia-smi {expected} B")
        else:
            check(False, f"PID {pid} missing from nvidia-smi --query-compute-apps")
        check(process["name"] is not None and "python" in (process.get("command") or process["name"]),
              f"PID {pid} named {process['name']!r} / {process.get('command')!r}")


def ordinals(oomdoc_path, torch_path):
    doc = load(oomdoc_path)
    torch_uuids = load(torch_path)
    mapping = {}
    for device in doc["devices"]:
        if device["cuda_ordinal"] is not None:
            mapping[device["cuda_ordinal"]] = device["uuid"]
    oomdoc_order = [mapping[i] for i in sorted(mapping)]
    check(oomdoc_order == torch_uuids, f"oomdoc CUDA order {oomdoc_order} == torch {torch_uuids}")
    check(doc["cuda"]["visible_count"] == len(torch_uuids),
          f"visible_count {doc['cuda']['visible_count']} == torch.cuda.device_count() {len(torch_uuids)}")


def bench(bench_path):
    b = load(bench_path)
    check(b["memory_calls_per_second"] >= 1000, f"memory(): {b['memory_calls_per_second']:.0f} calls/s >= 1000")
    check(b["inventory_median_us"] < 50000, f"inventory median {b['inventory_median_us']} µs < 50 ms")
    print(f"figures: memory() {b['memory_calls_per_second']:.0f}/s, max call {b['memory_call_max_us']} µs, "
          f"inventory first {b['inventory_first_us']} µs, median {b['inventory_median_us']} µs, max {b['inventory_max_us']} µs")


def same(a_path, b_path):
    a, b = load(a_path), load(b_path)
    for doc in (a, b):
        doc.pop("source", None)
        doc.pop("elapsed_us", None)
        # Whose CUDA numbering applies differs by design: this shell's live, the recording's in a replay.
        doc.pop("cuda_numbering_from", None)
    check(a == b, f"{a_path} and {b_path} agree but for `source` and `cuda_numbering_from`")


def cudatotal(oomdoc_path, ready):
    doc = load(oomdoc_path)
    info = load(ready)
    device = next(d for d in doc["devices"] if d["uuid"] == info["uuid"])
    m = device["memory"]
    check(m["total_bytes"] - m["reserved_bytes"] == info["mem_get_info"][1],
          f"NVML total − reserved {m['total_bytes'] - m['reserved_bytes']} == torch mem_get_info total {info['mem_get_info'][1]}")


if __name__ == "__main__":
    {"agree": agree, "holder": holder, "ordinals": ordinals, "bench": bench, "same": same,
     "cudatotal": cudatotal}[sys.argv[1]](*sys.argv[2:])
    sys.exit(1 if failures else 0)
