#!/usr/bin/env bash
# End-to-end test of `oomdoc exporter` with the real Prometheus server (issue 20).
#
# Starts the exporter on 127.0.0.1 following a temp file (GPUs replayed from a fixture),
# starts Prometheus scraping it every second (temp config and storage, free loopback port),
# appends a real vLLM log with a CUDA OOM to the followed file, then asks Prometheus's query
# API for oomdoc_oom_events_total and checks: one series, value 1, the cause/phase/engine that
# `oomdoc explain --json` gives for the same log.
#
# Needs the Debian package `prometheus` (installed with apt-get when missing: root and network).
# Not part of .ci/run for that reason (see README.md, Development).
#
# Usage: scripts/e2e_prometheus.sh            (OOMDOC=path/to/oomdoc to skip the build)
#        LOG=tests/fixtures/engine_log/other.log scripts/e2e_prometheus.sh
set -euo pipefail
cd "$(dirname "$0")/.."

LOG=${LOG:-tests/fixtures/engine_log/vllm-0.10.1-v0-oom-after-weights-load.log}
GPUS=tests/fixtures/gpus/synthetic-2xh200.json

if ! command -v prometheus >/dev/null; then
    if [ "$(id -u)" != 0 ]; then
        echo "e2e: prometheus is missing and installing it needs root (apt-get install -y prometheus)" >&2
        exit 2
    fi
    echo "e2e: installing the Debian package prometheus" >&2
    DEBIAN_FRONTEND=noninteractive apt-get install -y prometheus >/dev/null ||
        { apt-get update >/dev/null && DEBIAN_FRONTEND=noninteractive apt-get install -y prometheus >/dev/null; }
fi
# The package's service may start on install; this test uses its own instance.

if [ -z "${OOMDOC:-}" ]; then
    cargo build --release --quiet
    OOMDOC=${CARGO_TARGET_DIR:-target}/release/oomdoc
fi

tmp=$(mktemp -d)
pids=()
cleanup() {
    for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
    for pid in "${pids[@]}"; do wait "$pid" 2>/dev/null || true; done
    rm -rf "$tmp"
}
trap cleanup EXIT INT TERM

free_port() {
    python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

followed=$tmp/engine.log
: >"$followed"
"$OOMDOC" exporter --listen 127.0.0.1:0 --follow "$followed" --gpu-from "$GPUS" \
    2>"$tmp/exporter.err" &
pids+=($!)
exporter=""
for _ in $(seq 100); do
    exporter=$(sed -n 's#.*listening on http://\([^/]*\)/metrics.*#\1#p' "$tmp/exporter.err")
    [ -n "$exporter" ] && break
    sleep 0.1
done
[ -n "$exporter" ] || { echo "e2e: the exporter did not start" >&2; cat "$tmp/exporter.err" >&2; exit 1; }
echo "exporter: http://$exporter/metrics ($("$OOMDOC" --version))"

prom_port=$(free_port)
cat >"$tmp/prometheus.yml" <<YAML
global:
  scrape_interval: 1s
  evaluation_interval: 1s
scrape_configs:
  - job_name: oomdoc
    scrape_interval: 1s
    scrape_timeout: 1s
    honor_labels: true
    static_configs:
      - targets: ["$exporter"]
YAML
promtool check config "$tmp/prometheus.yml" >/dev/null
prometheus --config.file="$tmp/prometheus.yml" --storage.tsdb.path="$tmp/tsdb" \
    --web.listen-address="127.0.0.1:$prom_port" >"$tmp/prometheus.log" 2>&1 &
pids+=($!)
api=http://127.0.0.1:$prom_port/api/v1
echo "prometheus: $(prometheus --version 2>&1 | head -1) on 127.0.0.1:$prom_port"

query() { # prints the JSON answer of an instant query
    curl -fsS --get --data-urlencode "query=$1" "$api/query"
}
# Wait until Prometheus has scraped the exporter (the target is up).
up=""
for _ in $(seq 60); do
    up=$(query 'up{job="oomdoc"}' 2>/dev/null |
        python3 -c 'import json,sys; r=json.load(sys.stdin)["data"]["result"]; print(r[0]["value"][1] if r else "")' 2>/dev/null || true)
    [ "$up" = 1 ] && break
    sleep 0.5
done
[ "$up" = 1 ] || { echo "e2e: Prometheus never scraped the exporter" >&2; tail -20 "$tmp/prometheus.log" >&2; exit 1; }
echo "scraping: up{job=\"oomdoc\"} = 1; GPUs seen: $(query 'count(oomdoc_gpu_memory_total_bytes)' |
    python3 -c 'import json,sys; r=json.load(sys.stdin)["data"]["result"]; print(r[0]["value"][1] if r else 0)')"

before=$(query 'oomdoc_oom_events_total' | python3 -c 'import json,sys; print(len(json.load(sys.stdin)["data"]["result"]))')
echo "before the log: $before oomdoc_oom_events_total series"

expected=$("$OOMDOC" explain --json "$LOG" |
    python3 -c 'import json,sys; d=json.load(sys.stdin); print(d["verdict"]["cause"], d["phase"]["failed_in"], d["engine"]["name"])')
read -r cause phase engine <<<"$expected"
# The default log's labels are also pinned here, so a change in `explain` shows too.
if [ "$LOG" = tests/fixtures/engine_log/vllm-0.10.1-v0-oom-after-weights-load.log ] &&
    [ "$expected" != "large_allocation unknown vllm" ]; then
    echo "e2e: FAIL: explain now says '$expected' for $LOG (pinned: large_allocation unknown vllm)" >&2
    exit 1
fi
echo "appending $LOG ($(wc -l <"$LOG") lines); explain says cause=$cause phase=$phase engine=$engine"
cat "$LOG" >>"$followed"

# The failure completes 2 s after the log goes quiet, then the next scrape carries it.
answer=""
for _ in $(seq 40); do
    answer=$(query 'oomdoc_oom_events_total')
    n=$(python3 -c 'import json,sys; print(len(json.loads(sys.argv[1])["data"]["result"]))' "$answer")
    [ "$n" -gt 0 ] && break
    sleep 0.5
done
sleep 2 # one more scrape: a second, wrongly counted event would show now
answer=$(query 'oomdoc_oom_events_total')
python3 - "$answer" "$cause" "$phase" "$engine" <<'PY'
import json, sys
answer, cause, phase, engine = sys.argv[1:]
result = json.loads(answer)["data"]["result"]
for series in result:
    labels = {k: v for k, v in sorted(series["metric"].items())}
    print("query oomdoc_oom_events_total ->", json.dumps(labels), "=", series["value"][1])
problems = []
if len(result) != 1:
    problems.append(f"{len(result)} series, expected 1")
else:
    metric, value = result[0]["metric"], result[0]["value"][1]
    if value != "1":
        problems.append(f"value {value}, expected 1")
    for name, want in (("cause", cause), ("phase", phase), ("engine", engine)):
        if metric.get(name) != want:
            problems.append(f"{name}={metric.get(name)!r}, expected {want!r}")
if problems:
    print("e2e: FAIL:", "; ".join(problems))
    sys.exit(1)
print(f"e2e: PASS: oomdoc_oom_events_total{{cause=\"{cause}\",phase=\"{phase}\",engine=\"{engine}\"}} = 1 through Prometheus")
PY
last=$(query 'oomdoc_last_oom_timestamp_seconds' |
    python3 -c 'import json,sys; r=json.load(sys.stdin)["data"]["result"]; print(r[0]["value"][1] if r else "absent")')
echo "oomdoc_last_oom_timestamp_seconds = $last"
