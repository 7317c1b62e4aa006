#!/usr/bin/env bash
# Native benchmark of the scoring core on the paper-sized synthetic grid (3 datasets of 200, 200
# and 164 tasks; 3 models × 4 methods; 6,768 rollouts): parse + score + 10,000-resample bootstrap
# + paired deltas, then the same with other B and with 2× / 4× the rollouts, to show the scaling.
# Prints numbers only; nothing is asserted. Run from anywhere: bash bench/core.sh
set -euo pipefail
cd "$(dirname "$0")/.."
out=bench/out; mkdir -p "$out"
cargo build --release --quiet --example synth_grid --example bench_core
bin=target/release/examples
[ -f "$out/grid1.jsonl" ] || "$bin/synth_grid" -o "$out/grid1.jsonl" 2>/dev/null
[ -f "$out/grid2.jsonl" ] || "$bin/synth_grid" --copies 2 -o "$out/grid2.jsonl" 2>/dev/null
[ -f "$out/grid4.jsonl" ] || "$bin/synth_grid" --copies 4 -o "$out/grid4.jsonl" 2>/dev/null
echo "# machine: $(nproc) cores; one thread used"
echo "# scaling in B (paper-sized grid)"
for b in 0 1000 5000 10000 20000; do "$bin/bench_core" "$out/grid1.jsonl" --bootstrap "$b"; done
echo "# scaling in rollouts (B = 10000)"
for n in 1 2 4; do "$bin/bench_core" "$out/grid$n.jsonl" --bootstrap 10000; done
