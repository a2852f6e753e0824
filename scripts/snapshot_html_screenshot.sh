#!/usr/bin/env bash
# Renders `oomdoc snapshot --format html` in headless Chromium and keeps a screenshot, for
# issues 16 and 19: the segment map (bars proportional to size, log-scale toggle), the
# allocated-memory timeline stacked by site and by category, growth by site.
#
#   cargo build --release && scripts/snapshot_html_screenshot.sh [SNAPSHOT] [OUT_DIR]
#
# SNAPSHOT defaults to a real one recorded on an H200 (the repository's model_forward
# fixture). A large synthetic one from scripts/gen_snapshot.py shows the load time of a big
# page, but its segments are not derived from its trace, so most of its timeline is "held
# before the trace". Needs a Chromium: chromium-headless-shell,
# chromium or google-chrome (Debian: `apt-get install chromium-headless-shell`). Prints the
# time oomdoc took, the page size, how long Chromium took to load and draw it, and checks
# the page's DOM (two timelines with bands, a segment map per scale, no external loads).
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
oomdoc=${OOMDOC:-${CARGO_TARGET_DIR:-$root/target}/release/oomdoc}
out=${2:-/tmp/oomdoc-html}
mkdir -p "$out"
snapshot=${1:-$root/tests/fixtures/h200-torch2.11/snap/model_forward.pickle}
browser=""
for candidate in chromium-headless-shell chromium chromium-browser google-chrome; do
    if command -v "$candidate" > /dev/null; then
        browser=$(command -v "$candidate")
        break
    fi
done
if [ -z "$browser" ] && [ -x /usr/lib/chromium/chromium-headless-shell ]; then
    browser=/usr/lib/chromium/chromium-headless-shell
fi
[ -n "$browser" ] || { echo "no headless Chromium found (apt-get install chromium-headless-shell)" >&2; exit 2; }
[ -x "$oomdoc" ] || { echo "no oomdoc binary at $oomdoc (cargo build --release)" >&2; exit 2; }

html=$out/snapshot.html
start=$(date +%s.%N)
"$oomdoc" snapshot "$snapshot" --format html -o "$html" || [ $? -eq 1 ]
end=$(date +%s.%N)
echo "oomdoc: $(python3 -c "print(f'{$end - $start:.2f}')") s for $(du -h "$snapshot" | cut -f1) of snapshot; page $(du -h "$html" | cut -f1)"

flags=(--headless --no-sandbox --disable-gpu --hide-scrollbars --disable-dev-shm-usage)
start=$(date +%s.%N)
"$browser" "${flags[@]}" --window-size=1200,2600 --screenshot="$out/snapshot.png" "file://$html" \
    > "$out/chromium.log" 2>&1
end=$(date +%s.%N)
echo "chromium: loaded and drew the page in $(python3 -c "print(f'{$end - $start:.2f}')") s -> $out/snapshot.png"
"$browser" "${flags[@]}" --dump-dom "file://$html" > "$out/dom.html" 2>> "$out/chromium.log"

python3 - "$out/dom.html" <<'PY'
import re, sys
dom = open(sys.argv[1]).read()
checks = {
    "timelines (by site, by category)": len(re.findall(r'data-timeline="', dom)) >= 2,
    "stacked bands": len(re.findall(r'class="band"', dom)) >= 2,
    "segment map, proportional": "bar length proportional to segment size" in dom,
    "segment map, log scale": "bar length on a log scale" in dom,
    "no external loads": not re.search(r'(src|href)="(https?:)?//', dom),
}
for name, ok in checks.items():
    print(f"{'ok ' if ok else 'FAIL'} {name}")
sys.exit(0 if all(checks.values()) else 1)
PY
