"""Checks the records `run.sh` produced and prints the figures (also to $OUT/summary.txt/json).

Exit status 1 when a check fails. Reads only files: run.json of each run, the scripts' --times
JSON, and the nvidia-smi CSV written beside the spike run.
"""
import datetime
import json
import os
import sys
import time

OUT = sys.argv[1]
GIB = 1 << 30
failures = []
lines = []
figures = {}


def say(text):
    lines.append(text)
    print(text, flush=True)


def check(condition, text):
    say(("ok   " if condition else "FAIL ") + text)
    if not condition:
        failures.append(text)


def load(path):
    with open(path) as handle:
        return json.load(handle)


def epoch(rfc3339):
    return datetime.datetime.strptime(rfc3339.replace("Z", "+0000"), "%Y-%m-%dT%H:%M:%S.%f%z").timestamp()


# --- 1. load, convert (transient peak), OOM ------------------------------------------------
record = load(os.path.join(OUT, "run1", "run.json"))
times = load(os.path.join(OUT, "run1_times.json"))
start = epoch(record["started_at"])
say("run1: status=%s exit_code=%s duration_ms=%s" % (record["status"], record["exit_code"], record["duration_ms"]))
check(record["exit_code"] == 1, "run1 exits 1 (uncaught torch.OutOfMemoryError)")
explain = record["explain"] or {}
phase = explain.get("phase") or {}
say("run1: explain phase = %s" % json.dumps(phase))
check(explain.get("is_gpu_oom") is True, "run1 explain sees the GPU OOM")
check(phase.get("failed_in") == "profiling", "run1 failed_in = profiling (got %r)" % phase.get("failed_in"))
# explain knows vLLM's lines: "Model loading took" completes weights_load; the conversion has no
# vLLM line, so explain's last_completed stays weights_load while the run's phases show it.
check(phase.get("last_completed") in ("weights_load", "format_conversion"), "run1 last_completed = weights_load or format_conversion (got %r)" % phase.get("last_completed"))
say("run1: phases = %s" % json.dumps([(p["phase"], p["start_t_ms"], p["end_t_ms"], p["completed"]) for p in record["phases"]]))
check(any(p["phase"] == "format_conversion" and p["completed"] for p in record["phases"]), "run1 phases show format_conversion completed")
check(record["phases"] and record["phases"][-1]["phase"] == "profiling", "run1 last phase span is profiling")
memory = record["memory"]
check(memory["available"] is True, "run1 memory timeline available (reason: %s)" % memory.get("reason"))
if memory["available"] and memory["devices"]:
    device = memory["devices"][0]
    say("run1: device %s %s baseline used %.2f GiB free %.2f GiB; peak %.2f GiB at %s ms in %s; %d readings, %d kept points"
        % (device["uuid"], device["name"], (device["baseline_used_bytes"] or 0) / GIB, (device["baseline_free_bytes"] or 0) / GIB,
           (device["peak_used_bytes"] or 0) / GIB, device["peak_t_ms"], device["peak_phase"], device["sample_count"], len(device["samples"])))
    say("run1: peaks_by_phase GiB = %s" % json.dumps({k: round(v / GIB, 2) for k, v in device["peaks_by_phase"].items()}))
    check(device["baseline_free_bytes"] is not None and device["baseline_free_bytes"] > 100 * GIB, "run1 free memory before start recorded (> 100 GiB)")
    transient_t = (times["transient_start"] - start) * 1000.0
    check(device["peak_phase"] == "format_conversion", "run1 peak attributed to format_conversion (got %r)" % device["peak_phase"])
    check(device["peak_t_ms"] is not None and abs(device["peak_t_ms"] - transient_t) < 100, "run1 peak time %s ms within 100 ms of the transient (%.0f ms)" % (device["peak_t_ms"], transient_t))
    conversion = device["peaks_by_phase"].get("format_conversion", 0)
    load_peak = device["peaks_by_phase"].get("weights_load", 0)
    check(conversion - load_peak > 8 * GIB, "run1 transient peak %.2f GiB over the loading peak %.2f GiB by > 8 GiB" % (conversion / GIB, load_peak / GIB))
    figures["run1"] = {"peak_gib": round((device["peak_used_bytes"] or 0) / GIB, 2), "peak_phase": device["peak_phase"],
                       "baseline_free_gib": round((device["baseline_free_bytes"] or 0) / GIB, 2), "readings": device["sample_count"]}
check(record["memory"].get("inventory_at_oom") is not None, "run1 inventory taken at the OOM")

# --- 2. 10 ms spikes: oomdoc vs nvidia-smi -lms 100 -----------------------------------------
record = load(os.path.join(OUT, "run2", "run.json"))
spikes = load(os.path.join(OUT, "run2_times.json"))
start = epoch(record["started_at"])
memory = record["memory"]
check(memory["available"] is True, "run2 memory timeline available")
device = memory["devices"][0] if memory["devices"] else {"samples": [], "sample_count": 0}
points = device["samples"]
size = spikes["size_gib"] * GIB
baseline = min((p[1] for p in points), default=0)
caught = 0
for spike in spikes["spikes"]:
    lo = (spike["alloc"] - start) * 1000.0 - 20
    hi = (spike["freed"] - start) * 1000.0 + 20
    if any(lo <= t <= hi and used >= baseline + 0.75 * size for t, used in points):
        caught += 1
count = len(spikes["spikes"])
sampler = memory.get("sampler") or {}
duration_s = record["duration_ms"] / 1000.0
say("run2: oomdoc caught %d/%d spikes of %d GiB held %.0f ms (rate asked %s Hz, achieved %s Hz, late rounds %s, mean read %s us)"
    % (caught, count, spikes["size_gib"], spikes["hold_ms"], memory["sample_rate_hz"], sampler.get("achieved_rate_hz"),
       sampler.get("late_rounds"), sampler.get("mean_read_us")))
check(count > 0 and caught >= 0.9 * count, "run2 oomdoc catches >= 90% of 10 ms spikes")

smi_caught = 0
smi_rows = []
smi_path = os.path.join(OUT, "nvidia_smi.csv")
if os.path.exists(smi_path):
    with open(smi_path) as handle:
        for row in handle:
            parts = [part.strip() for part in row.split(",")]
            if len(parts) < 2:
                continue
            try:
                stamp = time.mktime(datetime.datetime.strptime(parts[0], "%Y/%m/%d %H:%M:%S.%f").timetuple())
                stamp += float("0." + parts[0].rsplit(".", 1)[1])
                smi_rows.append((stamp, int(parts[1]) * (1 << 20)))
            except (ValueError, IndexError):
                continue
    smi_base = min((used for _, used in smi_rows), default=0)
    for spike in spikes["spikes"]:
        if any(spike["alloc"] - 0.05 <= t <= spike["freed"] + 0.05 and used >= smi_base + 0.75 * size for t, used in smi_rows):
            smi_caught += 1
say("run2: nvidia-smi -lms 100 caught %d/%d spikes (%d rows)" % (smi_caught, count, len(smi_rows)))
cpu_ms = sampler.get("cpu_ms")
oomdoc_cpu = memory.get("oomdoc_cpu_ms")
if cpu_ms is not None:
    say("run2: sampler thread CPU %.0f ms over %.1f s run = %.2f%% of one core; oomdoc total CPU %s ms (%.2f%%)"
        % (cpu_ms, duration_s, cpu_ms / (duration_s * 10.0), oomdoc_cpu, (oomdoc_cpu or 0) / (duration_s * 10.0)))
figures["spikes"] = {"count": count, "oomdoc_caught": caught, "nvidia_smi_caught": smi_caught,
                     "sampler_cpu_ms": cpu_ms, "oomdoc_cpu_ms": oomdoc_cpu, "duration_s": duration_s,
                     "achieved_rate_hz": sampler.get("achieved_rate_hz"), "mean_read_us": sampler.get("mean_read_us"),
                     "kept_points": len(points), "readings": device.get("sample_count")}

# --- 3. --torch-snapshot -----------------------------------------------------------------
path = os.path.join(OUT, "run3", "run.json")
if os.path.exists(path):
    record = load(path)
    snapshot = record.get("torch_snapshot") or {}
    say("run3: torch_snapshot = %s" % json.dumps(snapshot))
    check(snapshot.get("file") is not None and os.path.exists(os.path.join(OUT, "run3", snapshot["file"])), "run3 snapshot file exists")
    status_path = os.path.join(OUT, "run3_snapshot_status.txt")
    if os.path.exists(status_path):
        with open(status_path) as handle:
            code = handle.read().strip()
        check(code == "0", "run3 `oomdoc snapshot` reads it (exit %s)" % code)

say("")
say("%d check(s) failed" % len(failures) if failures else "all checks passed")
with open(os.path.join(OUT, "summary.txt"), "w") as handle:
    handle.write("\n".join(lines) + "\n")
with open(os.path.join(OUT, "summary.json"), "w") as handle:
    json.dump({"failures": failures, "figures": figures}, handle, indent=1)
sys.exit(1 if failures else 0)
