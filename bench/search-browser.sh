#!/usr/bin/env bash
# The browser figure of bench/search.sh (issue #30's search, target ≤ 3 s once loaded): the
# 15-run ToolSandbox leaderboard (bench/make_leaderboard.py --vary-messages: copies differing
# in content, their conversations too; ≈ 15,500 rollouts in ≈ 31,000 files, built once under
# bench/out/) picked as one folder in headless Chromium, then the same
# queries as bench/search.sh run from the Rollouts tab's search box (bench/search-browser.mjs):
# the time from the click to the hits, the median of --runs. Uses the release build in dist/
# (built when missing). Prints the load average beside the figures: take them on a quiet
# machine (load < 1.5). Numbers only.
#   bash bench/search-browser.sh [--copies N] [--runs N]
# Needs ../shared/data/released-runs (not committed here).
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$PWD/node_modules/.bin:$PATH"
export TRUNK_SKIP_VERSION_CHECK=true
copies=15 runs=3
while [ $# -gt 0 ]; do
  case "$1" in
    --copies) copies="$2"; shift 2 ;;
    --runs) runs="$2"; shift 2 ;;
    *) echo "unknown option $1" >&2; exit 2 ;;
  esac
done
run=../shared/data/released-runs/toolsandbox/agent_openai/gpt-4.1_user_openai/gpt-4o-20240806_08_13_2025_00_17_37
[ -f "$run/result_summary.json" ] || { echo "shared run not found at $run" >&2; exit 1; }
out="bench/out/leaderboard-v3-x$copies"
if [ ! -d "$out" ]; then
  python3 bench/make_leaderboard.py "$run" "$out.tmp" --copies "$copies" --vary-messages
  mv "$out.tmp" "$out"
fi
[ -f dist/index.html ] || trunk build --release --locked
echo "# load average (1, 5, 15 min) before: $(cut -d' ' -f1-3 /proc/loadavg)"
node bench/search-browser.mjs --folder "$out" --runs "$runs"
echo "# load average (1, 5, 15 min) after: $(cut -d' ' -f1-3 /proc/loadavg)"
