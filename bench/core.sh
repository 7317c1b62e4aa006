#!/usr/bin/env bash
# Native benchmark of the scoring core on the paper-sized synthetic grid (3 datasets of 200, 200
# and 164 tasks; 3 models × 4 methods; 6,768 rollouts): parse + score + 10,000-resample bootstrap
# + paired deltas on 1, 2 and all cores, with 1× / 2× / 4× the rollouts, then other B, then
# one interval's ends by selection and by the histogram of counts. Prints the load average.
# Prints numbers only; nothing is asserted. Run from anywhere: bash bench/core.sh
set -euo pipefail
cd "$(dirname "$0")/.."
out=bench/out; mkdir -p "$out"
cargo build --release --quiet --example synth_grid --example bench_core --example bench_percentile
bin=target/release/examples
[ -f "$out/grid1.jsonl" ] || "$bin/synth_grid" -o "$out/grid1.jsonl" 2>/dev/null
[ -f "$out/grid2.jsonl" ] || "$bin/synth_grid" --copies 2 -o "$out/grid2.jsonl" 2>/dev/null
[ -f "$out/grid4.jsonl" ] || "$bin/synth_grid" --copies 4 -o "$out/grid4.jsonl" 2>/dev/null
all=$(nproc)
echo "# machine: $all cores; the report is the same bytes for any thread count"
echo "# load average (1, 5, 15 min) before: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "# threads: 1, 2 and all ($all); 1x, 2x, 4x the paper-sized grid; B = 10000"
for n in 1 2 4; do
  for t in $(printf '%s\n' 1 2 "$all" | awk '!seen[$0]++'); do
    "$bin/bench_core" "$out/grid$n.jsonl" --bootstrap 10000 --threads "$t"
  done
done
echo "# scaling in B (paper-sized grid, all cores)"
for b in 0 1000 5000 20000; do "$bin/bench_core" "$out/grid1.jsonl" --bootstrap "$b"; done
echo "# per core: one interval's ends, selection vs histogram of counts (one rollout per task)"
"$bin/bench_percentile" --tasks 200 --bootstrap 10000
echo "# load average (1, 5, 15 min) after: $(cut -d' ' -f1-3 /proc/loadavg)"
