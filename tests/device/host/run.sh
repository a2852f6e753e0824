#!/usr/bin/env bash
# End-to-end test of host memory in `oomdoc run` (issue 17), on any Linux machine where we are
# root: no GPU needed. Makes a memory cgroup with a small limit (cgroup v1 `memory` controller,
# or v2 with the memory controller), runs the real
#   oomdoc run -- python3 -c '<print a loading line, then allocate past the limit>'
# inside it, and checks that run.json says host out-of-memory kill with the limit, the peak and
# the phase, and that `oomdoc report` says it too; then a plain `kill -9` in the same cgroup,
# which must stay "killed by a signal (cause not shown)".
#
# Builds nothing: uses $OOMDOC, else target/release/oomdoc (what run_all.sh needs), else
# ${CARGO_TARGET_DIR}/release/oomdoc. Writes to $OUT/host (a temporary directory when OUT is
# unset). Prints `SKIP: <reason>` and exits 0 where no cgroup can be made. Exit status: the
# number of failed checks.
# Usage: bash tests/device/host/run.sh    (env LIMIT_MIB, default 128)
set -uo pipefail
cd "$(dirname "$0")/../../.."
O="${OUT:-$(mktemp -d)}/host"
mkdir -p "$O"
LIMIT_MIB="${LIMIT_MIB:-128}"
LIMIT=$((LIMIT_MIB << 20))
skip() { echo "SKIP: $*" | tee "$O/skipped.txt"; exit 0; }

BIN="${OOMDOC:-}"
for candidate in target/release/oomdoc "${CARGO_TARGET_DIR:-target}/release/oomdoc"; do
    [ -n "$BIN" ] || { [ -x "$candidate" ] && BIN="$candidate"; }
done
[ -n "$BIN" ] && [ -x "$BIN" ] || { echo "no oomdoc binary: run cargo build --release"; exit 2; }
BIN="$(cd "$(dirname "$BIN")" && pwd)/$(basename "$BIN")"
command -v python3 > /dev/null || skip "python3 is not installed"
[ "$(id -u)" = 0 ] || skip "not root: cannot make a memory cgroup"

# Pick a place for a new memory cgroup.
V1=/sys/fs/cgroup/memory
V2=""
if [ -f "$V1/memory.limit_in_bytes" ] && [ -w "$V1" ]; then
    VERSION=v1
    CG="$V1/oomdoc-e2e-$$"
else
    for root in /sys/fs/cgroup /sys/fs/cgroup/unified; do
        if [ -f "$root/cgroup.controllers" ] && grep -qw memory "$root/cgroup.controllers"; then
            V2="$root"; break
        fi
    done
    [ -n "$V2" ] || skip "no writable cgroup v1 memory controller and no cgroup v2 hierarchy with the memory controller"
    VERSION=v2
    # The memory controller must be enabled for children of the parent.
    grep -qw memory "$V2/cgroup.subtree_control" 2>/dev/null \
        || echo +memory > "$V2/cgroup.subtree_control" 2>/dev/null \
        || skip "cannot enable the memory controller in $V2/cgroup.subtree_control"
    CG="$V2/oomdoc-e2e-$$"
fi
mkdir "$CG" 2>/dev/null || skip "cannot make $CG (read-only cgroup filesystem, or a container without cgroup write access)"
trap 'rmdir "$CG" 2>/dev/null' EXIT
if [ "$VERSION" = v1 ]; then
    echo "$LIMIT" > "$CG/memory.limit_in_bytes" || skip "cannot set $CG/memory.limit_in_bytes"
    # With swap, memory+swap must be limited too, or the job swaps instead of being killed.
    [ -f "$CG/memory.memsw.limit_in_bytes" ] && echo "$LIMIT" > "$CG/memory.memsw.limit_in_bytes"
else
    echo "$LIMIT" > "$CG/memory.max" || skip "cannot set $CG/memory.max"
    [ -f "$CG/memory.swap.max" ] && echo 0 > "$CG/memory.swap.max"
fi
echo "== cgroup $VERSION $CG, limit $LIMIT_MIB MiB; oomdoc: $BIN"

# Runs `oomdoc run` in the cgroup (the shell moves itself in, then execs: oomdoc and its child
# share the cgroup, as in a container or a Slurm job).
in_cgroup() {
    local name="$1"; shift
    rm -rf "$O/$name"
    sh -c 'echo $$ > "$0/cgroup.procs" && exec "$@"' "$CG" "$BIN" run --out "$O/$name" -- "$@" \
        > "$O/$name.stdout" 2> "$O/$name.stderr"
    echo "$name: oomdoc run exit $?" | tee "$O/$name.exit"
    "$BIN" report "$O/$name" > "$O/$name.report.txt" 2>&1
    "$BIN" report "$O/$name" --json > "$O/$name.report.json" 2>&1
}

echo "== 1. python3 loading weights: 8 MiB at a time past the limit"
in_cgroup oom python3 -c '
import time
print("INFO Starting to load model demo/host-oom...", flush=True)
held = []
while True:
    held.append(bytearray(8 << 20))
    time.sleep(0.02)
'
echo "== 2. python3 killed by kill -9 well below the limit (not an OOM kill)"
in_cgroup sigkill python3 -c '
import os, time
held = bytearray(16 << 20)
time.sleep(0.3)
os.kill(os.getpid(), 9)
'
dmesg 2>/dev/null | grep -E "oom-kill:|Memory cgroup out of memory" | tail -n 2 > "$O/dmesg-oom.txt"
sed -n '1,40p' "$O/oom.stderr"

python3 - "$O" "$LIMIT" <<'PY' | tee "$O/checks.txt"
import json, sys
out, limit = sys.argv[1], int(sys.argv[2])
failed = 0
def check(name, ok, detail):
    global failed
    print(("PASS" if ok else "FAIL"), name, "-", detail)
    failed += 0 if ok else 1
run = json.load(open(f"{out}/oom/run.json"))
host = run.get("host") or {}
finding = host.get("finding") or {}
check("oom: oomdoc exited 137", open(f"{out}/oom.exit").read().strip().endswith("exit 137"),
      open(f"{out}/oom.exit").read().strip())
check("oom: child died by SIGKILL", run.get("signal") == 9 and run.get("status") == "signaled",
      f"status {run.get('status')}, signal {run.get('signal')}, exit_code {run.get('exit_code')}")
check("oom: host sampled from /proc", host.get("source") == "proc" and host.get("readings", 0) >= 3,
      f"source {host.get('source')}, {host.get('readings')} readings every {host.get('interval_ms')} ms")
check("oom: verdict is a host OOM kill", finding.get("kind") == "host_oom_kill", finding.get("kind"))
evidence = [e["kind"] for e in finding.get("evidence", [])]
check("oom: the cgroup's oom_kill count rose", "oom_kill_count_rose" in evidence, f"evidence {evidence}")
check("oom: counts before/after in the record",
      host.get("oom_kills_after") is not None and host.get("oom_kills_before") is not None
      and host["oom_kills_after"] > host["oom_kills_before"],
      f"{host.get('oom_kills_before')} -> {host.get('oom_kills_after')}")
check("oom: the limit is the one set", finding.get("limit_bytes") == limit and host.get("limit_bytes") == limit,
      f"limit_bytes {finding.get('limit_bytes')} / {host.get('limit_bytes')} vs {limit}")
peak = (finding.get("peak") or {}).get("bytes", 0)
check("oom: the peak is at the limit (>= 90 %)", peak >= 0.9 * limit and peak <= limit,
      f"peak {peak} B ({peak / 2**20:.1f} MiB, {(finding.get('peak') or {}).get('figure')})")
rss = (host.get("peak") or {}).get("tree_rss_bytes", 0)
check("oom: sampled tree RSS climbed past half the limit", rss >= 0.5 * limit,
      f"peak tree RSS {rss / 2**20:.1f} MiB in {(host.get('peak') or {}).get('phase')}")
check("oom: killed while loading weights", finding.get("phase_at_kill") == "weights_load",
      f"phase_at_kill {finding.get('phase_at_kill')}, peaks by phase "
      f"{[(p.get('phase'), p.get('tree_rss_bytes')) for p in host.get('peaks_by_phase', [])]}")
advice = [a["kind"] for a in finding.get("advice", [])]
check("oom: advice starts with a larger memory limit", advice[:1] == ["raise_memory_limit"], f"advice {advice}")
summary = open(f"{out}/oom.stderr").read()
check("oom: run's summary says host out-of-memory kill", "host out-of-memory kill" in summary,
      "stderr of oomdoc run")
report = open(f"{out}/oom.report.txt").read()
check("oom: report says host out-of-memory kill", "host out-of-memory kill" in report and "Host memory" in report,
      "oomdoc report (text)")
verdict = json.load(open(f"{out}/oom.report.json"))["runs"][0]["verdict"]
check("oom: report --json verdict", verdict.get("cause_kind") == "host_oom_kill", verdict.get("cause_kind"))
killed = json.load(open(f"{out}/sigkill/run.json"))
kfinding = (killed.get("host") or {}).get("finding") or {}
check("kill -9: died by SIGKILL", killed.get("signal") == 9, f"signal {killed.get('signal')}")
check("kill -9: cause not shown, no guess", kfinding.get("kind") == "killed_by_signal",
      f"{kfinding.get('kind')}: {kfinding.get('not_shown_because')}")
print(f"{failed} failed")
sys.exit(failed)
PY
exit $?
