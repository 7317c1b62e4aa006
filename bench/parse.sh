#!/usr/bin/env bash
# Native benchmark of the parse alone (issue 15, part 3): a ~100 MB canonical JSONL file (the
# paper-sized synthetic grid × 32, 216,576 rollouts) streamed through the ingest in the CLI's
# 1 MiB chunks, on 1 and 2 threads and on all cores, split across threads (the default) and not
# (`--sequential`); then the part the threads share (each line's JSON parse and validation) alone
# on one thread, the browser's split (what the pool workers and what the scoring worker do, each
# timed on one thread), and the default split against none on smaller chunks (where splitting starts to
# pay). The corpus is the same for every setting (tests/parallel_parse.rs). Prints the load
# average; prints numbers only, nothing is asserted. Run from anywhere: bash bench/parse.sh
set -euo pipefail
cd "$(dirname "$0")/.."
out=bench/out; mkdir -p "$out"
cargo build --release --quiet --example synth_grid --example bench_parse
bin=target/release/examples
[ -f "$out/grid32.jsonl" ] || "$bin/synth_grid" --copies 32 -o "$out/grid32.jsonl" 2>/dev/null
[ -f "$out/grid1.jsonl" ] || "$bin/synth_grid" -o "$out/grid1.jsonl" 2>/dev/null
all=$(nproc)
echo "# machine: $all cores"
echo "# load average (1, 5, 15 min) before: $(cut -d' ' -f1-3 /proc/loadavg)"
for t in $(printf '%s\n' 1 2 "$all" | awk '!seen[$0]++'); do
  "$bin/bench_parse" "$out/grid32.jsonl" --threads "$t" --runs 5 --sequential
  "$bin/bench_parse" "$out/grid32.jsonl" --threads "$t" --runs 5
done
"$bin/bench_parse" "$out/grid32.jsonl" --threads 1 --runs 5 --prepare-only
echo "# the browser's split (4 MiB slices read ahead by pool workers), both shares on one thread"
"$bin/bench_parse" "$out/grid32.jsonl" --runs 5 --sliced --chunk 4194304
echo "# smaller chunks, 2 threads: the paper-sized grid (3.4 MB) split from 0 KiB vs never"
for c in 16384 65536 262144 1048576; do
  "$bin/bench_parse" "$out/grid1.jsonl" --threads 2 --runs 9 --chunk "$c" --sequential
  "$bin/bench_parse" "$out/grid1.jsonl" --threads 2 --runs 9 --chunk "$c" --min-chunk 0
done
echo "# load average (1, 5, 15 min) after: $(cut -d' ' -f1-3 /proc/loadavg)"
