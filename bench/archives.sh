#!/usr/bin/env bash
# Archives against the folder they hold (#28): the 15-run ToolSandbox leaderboard of
# bench/make_leaderboard.py (copies that differ in content: outcomes, error texts, arguments),
# packed as .tar.gz and .zip under bench/out/. Prints, natively, the wall time and peak RSS of
# `prefix-exec score` (bootstrap off) on the folder, the .tar.gz and the .zip, and of `gzip -dc`
# alone on the .tar.gz (the floor of any reader of it); then, unless --native-only, the
# browser's pick → ready for the folder and drop → ready for each archive, with the CPU time the
# browser's threads took (bench/browser-big.mjs).
# Numbers only.
#   bash bench/archives.sh [--copies N] [--native-only] [--runs N]
# Needs ../shared/data/released-runs. Take figures on a quiet machine (load < 1.5) and report
# the load average printed beside them.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$PWD/node_modules/.bin:$PATH"
export TRUNK_SKIP_VERSION_CHECK=true
copies=15 native_only=0 runs=3
while [ $# -gt 0 ]; do
  case "$1" in
    --copies) copies="$2"; shift 2 ;;
    --native-only) native_only=1; shift ;;
    --runs) runs="$2"; shift 2 ;;
    *) echo "unknown option $1" >&2; exit 2 ;;
  esac
done
run=../shared/data/released-runs/toolsandbox/agent_openai/gpt-4.1_user_openai/gpt-4o-20240806_08_13_2025_00_17_37
[ -f "$run/result_summary.json" ] || { echo "shared run not found at $run" >&2; exit 1; }
out="bench/out/leaderboard-v3-x$copies"
if [ ! -d "$out" ]; then
  python3 bench/make_leaderboard.py "$run" "$out.tmp" --copies "$copies"
  mv "$out.tmp" "$out"
fi
name=$(basename "$out")
[ -f "$out.tar.gz" ] || tar -czf "$out.tar.gz" -C bench/out "$name"
[ -f "$out.zip" ] || python3 -c 'import shutil, sys; shutil.make_archive(sys.argv[1], "zip", sys.argv[2], sys.argv[3])' "$out" bench/out "$name"
cargo build --release --locked --quiet --bin prefix-exec
ls -l "$out.tar.gz" "$out.zip" | awk '{printf "# %s: %.1f MB\n", $9, $5 / 1e6}'
echo "# load average: $(cut -d' ' -f1-3 /proc/loadavg)"
for i in $(seq "$runs"); do
  /usr/bin/time -f "gzip -dc alone: %e s wall, %M KB peak RSS" gzip -dc "$out.tar.gz" > /dev/null
  for input in "$out" "$out.tar.gz" "$out.zip"; do
    /usr/bin/time -f "native $(basename "$input"): %e s wall, %M KB peak RSS" target/release/prefix-exec \
      score "$input" --bootstrap 0 -q --json /dev/null > /dev/null
  done
done
echo "# load average: $(cut -d' ' -f1-3 /proc/loadavg)"
[ "$native_only" = 1 ] && exit 0
[ -f dist/index.html ] || trunk build --release --locked
# The folder picked whole first (the figure the archives are measured against), then each archive:
# timed --runs times unsampled (the sampling takes CPU from the two cores the app computes on),
# then once sampled for the peak RSS.
browser() {
  for i in $(seq "$runs"); do
    node bench/browser-big.mjs "$@" --bootstrap 0 --interval 0 | grep -E '^#|pick→ready|CPU'
  done
  node bench/browser-big.mjs "$@" --bootstrap 0 | grep -E 'peak RSS'
}
browser --folder "$out"
for input in "$out.tar.gz" "$out.zip"; do
  browser --file "$input"
done
echo "# load average: $(cut -d' ' -f1-3 /proc/loadavg)"
