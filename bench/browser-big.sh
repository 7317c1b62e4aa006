#!/usr/bin/env bash
# Browser benchmark of a big input: the synthetic grid repeated to ≈ 1 GB (296 copies, about
# 3.38 MB each) picked in headless Chromium (Debian's /usr/bin/chromium through playwright-core):
# pick→ready time and memory (summed RSS/PSS of the browser's processes, the page's JS heap, the
# worker's and the page's WebAssembly memory). Builds the app with Trunk if dist/ is missing and
# the synth_grid example; generates bench/out/grid-1gb.jsonl once (≈ 1 GB of disk).
# Prints numbers only; nothing is asserted. Run from anywhere:
#   bash bench/browser-big.sh [--bootstrap N (default 0: no bootstrap)] [--with-default] [--workers N]
#                             [--interval MS] [--samples FILE.csv]
# (--with-default adds a run with the app's default 10,000 resamples.) E2E_DIST overrides the
# directory served (default dist/); GRID_COPIES the number of copies.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$PWD/node_modules/.bin:$PATH"
export TRUNK_SKIP_VERSION_CHECK=true
if [ -z "${E2E_DIST:-}" ] && [ ! -f dist/index.html ]; then
  trunk build --release --locked
fi
out=bench/out; mkdir -p "$out"
copies="${GRID_COPIES:-296}"
grid="$out/grid-1gb.jsonl"
[ "$copies" = 296 ] || grid="$out/grid-x$copies.jsonl"
if [ ! -f "$grid" ]; then
  if ! cargo build --release --quiet --example synth_grid; then
    [ -x target/release/examples/synth_grid ] || exit 1
    echo "# warning: cargo build --example synth_grid failed; using the existing binary" >&2
  fi
  target/release/examples/synth_grid --copies "$copies" -o "$grid.tmp" 2>/dev/null
  mv "$grid.tmp" "$grid"
fi
exec node bench/browser-big.mjs --file "$grid" "$@"
