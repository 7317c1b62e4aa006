#!/usr/bin/env bash
# Browser benchmark: the paper-sized synthetic grid (6,768 rollouts, 10,000 resamples) in
# headless Chromium (Debian's /usr/bin/chromium through playwright-core), against the native CLI
# on the same file. Builds the app with Trunk if dist/ is missing and the release CLI if it is
# missing; generates the grid with the synth_grid example (it must equal the bundled example).
# Prints numbers only; nothing is asserted. Run from anywhere: bash bench/browser.sh [--runs N]
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$PWD/node_modules/.bin:$PATH"
export TRUNK_SKIP_VERSION_CHECK=true
if [ ! -f dist/index.html ]; then
  trunk build --release --locked
fi
out=bench/out; mkdir -p "$out"
cargo build --release --quiet --example synth_grid --bin prefix-exec
[ -f "$out/grid1.jsonl" ] || target/release/examples/synth_grid -o "$out/grid1.jsonl" 2>/dev/null
grid=static/examples/synthetic-grid.jsonl
if ! cmp -s "$out/grid1.jsonl" "$grid"; then
  echo "# note: $out/grid1.jsonl differs from $grid; benchmarking the generated grid" >&2
  grid="$out/grid1.jsonl"
fi
echo "# load average (1, 5, 15 min) before: $(cut -d' ' -f1-3 /proc/loadavg)"
node bench/browser.mjs --file "$grid" --runs 3 "$@"
echo "# load average (1, 5, 15 min) after: $(cut -d' ' -f1-3 /proc/loadavg)"
