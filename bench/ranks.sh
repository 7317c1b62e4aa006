#!/usr/bin/env bash
# What the report's ranks cost natively (issue #29): the paper-sized synthetic grid's scoring
# (build_report from the parsed corpus: score, bootstrap, intervals, paired deltas and its own
# ranks, 3 datasets × 12 conditions) against the ranks alone — the grid's own, and those of one
# dataset of 15 conditions × 200 tasks — at B = 10,000, on one thread and on all cores (medians
# of 7 runs). The goal: ranks for 15 conditions at 10,000 resamples add at most 10% to the
# grid's scoring time. Prints the load average: run it on a quiet machine (load < 1.5).
# Prints numbers only; nothing is asserted. Run from anywhere: bash bench/ranks.sh
set -euo pipefail
cd "$(dirname "$0")/.."
out=bench/out; mkdir -p "$out"
cargo build --release --quiet --example synth_grid --example bench_ranks
bin=target/release/examples
[ -f "$out/grid1.jsonl" ] || "$bin/synth_grid" -o "$out/grid1.jsonl" 2>/dev/null
echo "# load average (1, 5, 15 min) before: $(cut -d' ' -f1-3 /proc/loadavg)"
for t in $(printf '%s\n' 1 "$(nproc)" | awk '!seen[$0]++'); do
  "$bin/bench_ranks" "$out/grid1.jsonl" --bootstrap 10000 --conditions 15 --runs 7 --threads "$t"
done
echo "# load average (1, 5, 15 min) after: $(cut -d' ' -f1-3 /proc/loadavg)"
