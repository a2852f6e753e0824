#!/usr/bin/env bash
# End-to-end test of the host-memory sampler and the host OOM-kill analysis (issue 17), on any
# Linux machine where we are root: no GPU needed. Makes a memory cgroup with a small limit
# (cgroup v1 `memory` controller, or v2 with the memory controller), runs a python3 that
# allocates past the limit inside it under `host_watch` (examples/host_watch.rs), and checks
# that the kernel's OOM kill is seen with the limit and the peak; then a plain `kill -9` in the
# same cgroup, which must stay "killed by a signal (cause not shown)".
#
# Builds nothing: uses $HOST_WATCH, else ${CARGO_TARGET_DIR:-target}/release/examples/host_watch,
# else the debug one (`cargo build --release --example host_watch`).
# Writes to $OUT/host (a temporary directory when OUT is unset). Prints `SKIP: <reason>` and
# exits 0 where no cgroup can be made. Exit status: the number of failed checks.
# Usage: bash tests/device/host/run.sh    (env LIMIT_MIB, default 128)
set -uo pipefail
cd "$(dirname "$0")/../../.."
O="${OUT:-$(mktemp -d)}/host"
mkdir -p "$O"
LIMIT_MIB="${LIMIT_MIB:-128}"
LIMIT=$((LIMIT_MIB << 20))
skip() { echo "SKIP: $*" | tee "$O/skipped.txt"; exit 0; }

WATCH="${HOST_WATCH:-}"
TARGET="${CARGO_TARGET_DIR:-target}"
for candidate in "$TARGET/release/examples/host_watch" "$TARGET/debug/examples/host_watch"; do
    [ -n "$WATCH" ] || { [ -x "$candidate" ] && WATCH="$candidate"; }
done
[ -n "$WATCH" ] && [ -x "$WATCH" ] || {
    echo "no host_watch binary: run cargo build --release --example host_watch"; exit 2; }
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
echo "== cgroup $VERSION $CG, limit $LIMIT_MIB MiB; host_watch: $WATCH"

# Runs host_watch in the cgroup (the shell moves itself in, then execs: the sampler and the
# child share the cgroup, as `oomdoc run` and its child will).
in_cgroup() {
    local name="$1"; shift
    sh -c 'echo $$ > "$0/cgroup.procs" && exec "$@"' "$CG" "$WATCH" --samples -- "$@" \
        > "$O/$name.json" 2> "$O/$name.stderr"
    echo "$name: host_watch exit $?"
}

echo "== 1. python3 allocating 8 MiB at a time past the limit"
in_cgroup oom python3 -c '
import time
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

python3 - "$O" "$LIMIT" <<'PY' | tee "$O/checks.txt"
import json, sys
out, limit = sys.argv[1], int(sys.argv[2])
failed = 0
def check(name, ok, detail):
    global failed
    print(("PASS" if ok else "FAIL"), name, "-", detail)
    failed += 0 if ok else 1
oom = json.load(open(f"{out}/oom.json"))
finding = oom["finding"]
check("oom: child died by SIGKILL", oom["end"]["signal"] == 9, f"end {oom['end']}")
check("oom: verdict is a host OOM kill", finding["kind"] == "host_oom_kill", finding["kind"])
evidence = [e["kind"] for e in finding.get("evidence", [])]
check("oom: the cgroup's oom_kill count rose", "oom_kill_count_rose" in evidence, f"evidence {evidence}")
check("oom: the limit is the one set", finding.get("limit_bytes") == limit,
      f"limit_bytes {finding.get('limit_bytes')} vs {limit}")
peak = (finding.get("peak") or {}).get("bytes", 0)
check("oom: the peak is at the limit (>= 90 %)", peak >= 0.9 * limit and peak <= limit,
      f"peak {peak} B ({peak / 2**20:.1f} MiB, {(finding.get('peak') or {}).get('figure')})")
rss = oom.get("peak_tree_rss_bytes") or 0
check("oom: sampled tree RSS climbed past half the limit", rss >= 0.5 * limit,
      f"peak tree RSS {rss / 2**20:.1f} MiB over {oom['sample_count']} samples at {oom['interval_ms']} ms")
advice = [a["kind"] for a in finding.get("advice", [])]
check("oom: advice starts with a larger memory limit", advice[:1] == ["raise_memory_limit"], f"advice {advice}")
killed = json.load(open(f"{out}/sigkill.json"))
check("kill -9: died by SIGKILL", killed["end"]["signal"] == 9, f"end {killed['end']}")
check("kill -9: cause not shown, no guess", killed["finding"]["kind"] == "killed_by_signal",
      f"{killed['finding']['kind']}: {killed['finding'].get('not_shown_because')}")
print(f"{failed} failed")
sys.exit(failed)
PY
exit $?
