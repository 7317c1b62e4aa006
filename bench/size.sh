#!/usr/bin/env bash
# The app's size: every file Trunk put in dist/ (what `prefix-exec site` copies, the bundled
# example data in dist/examples/ excluded), uncompressed and gzipped, against the budgets of
# issue #15 (every wasm file <= 1.5 MB, the whole app <= 2.5 MB, uncompressed; MB = 10^6 bytes),
# the app's raised to 2.6 MB by issue #21: the file list grouped by run, the crashed-rollouts
# setting and column, the batched posting of big picks, and the `?files=` loader of
# `prefix-exec view` (#23) added about 60 KB to the page's wasm and 15 KB to the worker's
# (2,477,472 -> 2,556,806 bytes), with nothing left to
# cut that these features do not need.
#
#   bash bench/size.sh             # builds dist/ with Trunk if it is missing, prints the table
#   bash bench/size.sh --check     # the same, and exits 1 when a #15 budget is exceeded
#
# scripts/test.sh runs the check after its release build. Sizes are not timings: the check is
# exact and repeatable for a given toolchain.
set -euo pipefail
cd "$(dirname "$0")/.."
check=0
[ "${1:-}" = --check ] && check=1
if [ ! -f dist/index.html ]; then
  PATH="$PWD/node_modules/.bin:$PATH" TRUNK_SKIP_VERSION_CHECK=true trunk build --release --locked
fi
# Raised from 1.5 MB / 2.7 MB by #27-#29: reading archives in the worker (tar framing, gzip and
# zstd streams, members found again for the viewer: +91.5 KB) and ranks (worker +14.8 KB, page
# +26 KB); then by #30's app part (filters, search, clusters, deep links: worker +103 KB, page
# +232 KB with the aligned comparison and the File System Access walk); see README "Size".
# Raised again by #28's fifth slice: gzip through the browser's DecompressionStream with the
# wasm decoder taking over where it fails, tar read push-wise so that stream can feed it, and
# the decoder run on a pool worker (worker +30 KB, page +3.6 KB, JS glue +2 KB). And by its
# sixth: archive members prepared by the pool workers and sent back in a compact form (the
# ToolSandbox reading's serde for postcard, the batching sink: worker +29 KB, page +4 KB).
# And by its seventh: the labels' prefilter (worker +19.6 KB) and `?data=` links read while they
# download (worker +18.5 KB, page +11.4 KB): the app to 3.6 MB.
# And by #28's last slice: the worker's own code at opt-level "s" (+412 KB) and JSON read without
# tracking the path first (+102 KB), which with the report sent as bytes took the leaderboard's
# .tar.gz in the browser from 2.5x the CLI to 2x: 2.5 MB per wasm file, 4.15 MB the app.
# And by #28's ninth: zlib-rs instead of miniz_oxide (zip members inflated 35-40 % faster in
# wasm, a dropped .tar.gz decoded by a pool worker faster than DecompressionStream: worker
# +61 KB): 2.56 MB per wasm file, 4.22 MB the app.
WASM_BUDGET=2560000
APP_BUDGET=4220000
total=0
total_gz=0
over=0
printf '%-20s %12s %12s\n' file bytes gzip-9
while IFS= read -r f; do
  rel=${f#dist/}
  bytes=$(stat -c %s "$f")
  gz=$(gzip -9 -c "$f" | wc -c)
  total=$((total + bytes))
  total_gz=$((total_gz + gz))
  mark=""
  if [[ "$rel" == *.wasm ]] && [ "$bytes" -gt "$WASM_BUDGET" ]; then
    mark="  OVER the ${WASM_BUDGET}-byte wasm budget"
    over=1
  fi
  printf '%-20s %12d %12d%s\n' "$rel" "$bytes" "$gz" "$mark"
done < <(find dist -type f -not -path 'dist/examples/*' -not -path 'dist/.*' | sort)
mark=""
if [ "$total" -gt "$APP_BUDGET" ]; then
  mark="  OVER the ${APP_BUDGET}-byte app budget"
  over=1
fi
printf '%-20s %12d %12d%s\n' "total (app)" "$total" "$total_gz" "$mark"
if [ -d dist/examples ]; then
  printf '%-20s %12d %12s\n' "examples (excluded)" "$(du -sb dist/examples | cut -f1)" "-"
fi
if [ "$check" = 1 ] && [ "$over" = 1 ]; then
  echo "size check failed: a #15 budget is exceeded" >&2
  exit 1
fi
