#!/usr/bin/env bash
# Search across a whole released leaderboard, natively: the 15-run ToolSandbox leaderboard of
# bench/leaderboard.sh (bench/make_leaderboard.py: the shared gpt-4.1 run copied under 15
# names, each copy differing in content — with --vary-messages, its conversations too, so no
# index or memo keeps one copy's texts for all; ≈ 15,500 rollouts in ≈ 31,000 files, built
# once under bench/out/). Prints, for a few queries, the time `prefix-exec search` spends searching once
# the folder is read (re-reading every rollout's source, matching tool names, arguments,
# errors and messages), beside the time it took to read the folder, and the hits. Prints
# numbers only.
#   bash bench/search.sh [--copies N] [--threads N]
# Needs ../shared/data/released-runs (not committed here). Take figures on a quiet machine and
# report the load average printed beside them.
set -euo pipefail
cd "$(dirname "$0")/.."
copies=15 threads=()
while [ $# -gt 0 ]; do
  case "$1" in
    --copies) copies="$2"; shift 2 ;;
    --threads) threads=(--threads "$2"); shift 2 ;;
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
cargo build --release --locked --quiet --bin prefix-exec
# A warm page cache for every run (the first read of 550 MB from disk measures the disk).
target/release/prefix-exec score "$out" --bootstrap 0 -q --json /dev/null >/dev/null
for query in "low battery|cellular" "^send_message" "PermissionError" "e"; do
  for field in all error; do
    echo "# load average: $(cut -d' ' -f1-3 /proc/loadavg)"
    echo "query ${query@Q} --field $field:"
    for i in 1 2 3; do
      target/release/prefix-exec search "$out" --query "$query" --field "$field" --limit 100 \
        "${threads[@]}" --json 2>&1 >/dev/null | grep -E '^prefix-exec: ([0-9]+ hits|searched in)' | paste -sd' '
    done
  done
done
# The search index the browser's worker builds (search --indexed: the same hits): the time to
# read every rollout's texts into it, its size, and a search of it.
echo "# load average: $(cut -d' ' -f1-3 /proc/loadavg)"
for query in "low battery|cellular" "e"; do
  echo "query ${query@Q} --field all --indexed:"
  target/release/prefix-exec search "$out" --query "$query" --field all --limit 100 --indexed \
    "${threads[@]}" --json 2>&1 >/dev/null | grep -E '^prefix-exec: indexed' 
done
