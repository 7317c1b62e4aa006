#!/usr/bin/env bash
# The browser figure of issue #29's ranks benchmark (bench/ranks.sh is the native one): what
# the ranks of 15 conditions at 10,000 resamples add to the paper grid's scoring in headless
# Chromium. Builds examples/bench_ranks_web.rs for wasm32 with the app worker's profile
# (`wasm-worker`: the kernel at opt-level 3, the rest at "z"; the example's own link pipeline is
# the main package's, so the grid's bootstrap may be less vectorised than in the app's worker),
# binds it with wasm-bindgen, and runs bench/ranks-browser.mjs. Prints the load average: run it
# on a quiet machine (load < 1.5). Numbers only. Run from anywhere: bash bench/ranks-browser.sh
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$PWD/node_modules/.bin:$PATH"
out=bench/out; mkdir -p "$out/ranks-web"
cargo build --release --quiet --example synth_grid
[ -f "$out/grid1.jsonl" ] || target/release/examples/synth_grid -o "$out/grid1.jsonl" 2>/dev/null
cargo build --locked --quiet --profile wasm-worker --target wasm32-unknown-unknown --example bench_ranks_web
wasm-bindgen --target web --out-dir "$out/ranks-web" \
  target/wasm32-unknown-unknown/wasm-worker/examples/bench_ranks_web.wasm
echo "# load average (1, 5, 15 min) before: $(cut -d' ' -f1-3 /proc/loadavg)"
node bench/ranks-browser.mjs --out "$out/ranks-web" --grid "$out/grid1.jsonl" "$@"
echo "# load average (1, 5, 15 min) after: $(cut -d' ' -f1-3 /proc/loadavg)"
