#!/usr/bin/env bash
# A whole released leaderboard, natively and in the browser: the shared complete ToolSandbox run
# (gpt-4.1, 1,032 scenarios) copied under 15 agent_* names, each copy made to differ in content
# (outcomes, error texts, arguments: no memo answers one copy from another), ≈ 31,000 files
# (bench/make_leaderboard.py,
# built once under bench/out/). Prints the native wall time and peak RSS of `prefix-exec score`
# (bootstrap off) and, beside it, Python's json.loads of every file of the folder (the issue's
# baseline), then the browser's pick→ready time and memory with the folder picked through
# "Choose a folder…" (bench/browser-big.mjs --folder, bootstrap off). Prints numbers only.
#   bash bench/leaderboard.sh [--copies N] [--native-only] [--workers N]
# Needs ../shared/data/released-runs (not committed here). Take figures on a quiet machine and
# report the load average printed beside them.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$PWD/node_modules/.bin:$PATH"
export TRUNK_SKIP_VERSION_CHECK=true
copies=15 native_only=0 workers=()
while [ $# -gt 0 ]; do
  case "$1" in
    --copies) copies="$2"; shift 2 ;;
    --native-only) native_only=1; shift ;;
    --workers) workers=(--workers "$2"); shift 2 ;;
    *) echo "unknown option $1" >&2; exit 2 ;;
  esac
done
run=../shared/data/released-runs/toolsandbox/agent_openai/gpt-4.1_user_openai/gpt-4o-20240806_08_13_2025_00_17_37
[ -f "$run/result_summary.json" ] || { echo "shared run not found at $run" >&2; exit 1; }
out="bench/out/leaderboard-v3-x$copies"
if [ ! -d "$out" ]; then
  python3 bench/make_leaderboard.py "$run" "$out.tmp" --copies "$copies"
  mv "$out.tmp" "$out"
fi
cargo build --release --locked --quiet --bin prefix-exec
echo "# load average: $(cut -d' ' -f1-3 /proc/loadavg)"
for i in 1 2 3; do
  /usr/bin/time -f "native: %e s wall, %M KB peak RSS" target/release/prefix-exec \
    score "$out" --bootstrap 0 -q --json /dev/null >/dev/null
done
# The baseline of issue #21: Python merely parsing every file of the folder (json.loads).
for i in 1 2; do
  /usr/bin/time -f "python json.loads of every file: %e s wall, %M KB peak RSS" python3 -c '
import json, os, sys
for d, _, fs in os.walk(sys.argv[1]):
    for f in fs:
        if f.endswith((".json", ".jsonl")):
            with open(os.path.join(d, f), "rb") as h:
                b = h.read()
            try:
                json.loads(b)
            except ValueError:
                pass
' "$out"
done
[ "$native_only" = 1 ] && exit 0
[ -f dist/index.html ] || trunk build --release --locked
echo "# load average: $(cut -d' ' -f1-3 /proc/loadavg)"
exec node bench/browser-big.mjs --folder "$out" --bootstrap 0 "${workers[@]}"
