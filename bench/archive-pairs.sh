#!/usr/bin/env bash
# The browser against the CLI on the same archive, in interleaved pairs (#28): each pair runs
# `prefix-exec score` on the archive (bootstrap off), then the browser's drop → ready on it
# (bench/browser-big.mjs, a fresh browser, no sampling), and prints both and their ratio; at the
# end the median ratio. A pair's two runs are seconds apart, so a machine whose speed drifts
# (these shared machines' CLI figure moves by ±25% from one minute to the next) moves both.
#   bash bench/archive-pairs.sh [--pairs N] [ARCHIVE ...]
# Default: 5 pairs on each of the 15-run leaderboard's .tar.gz and .zip (bench/archives.sh makes
# them). Needs the release CLI and the built app (dist/, or E2E_DIST). Numbers only; take them
# on a quiet machine (load < 1.5), the load average is printed beside each pair.
set -euo pipefail
cd "$(dirname "$0")/.."
pairs=5
files=()
while [ $# -gt 0 ]; do
  case "$1" in
    --pairs) pairs="$2"; shift 2 ;;
    *) files+=("$1"); shift ;;
  esac
done
[ ${#files[@]} -gt 0 ] || files=(bench/out/leaderboard-v3-x15.tar.gz bench/out/leaderboard-v3-x15.zip)
cli=target/release/prefix-exec
[ -x "$cli" ] || { echo "build the CLI first: cargo build --release" >&2; exit 1; }
timing=$(mktemp)
trap 'rm -f "$timing"' EXIT
for f in "${files[@]}"; do
  [ -f "$f" ] || { echo "$f not found (bash bench/archives.sh --native-only makes it)" >&2; exit 1; }
  ratios=()
  for i in $(seq "$pairs"); do
    load=$(cut -d' ' -f1 /proc/loadavg)
    /usr/bin/time -o "$timing" -f "%e" "$cli" score "$f" --bootstrap 0 -q --json /dev/null >/dev/null 2>&1
    c=$(tail -1 "$timing")
    b=$(node bench/browser-big.mjs --file "$f" --bootstrap 0 --interval 0 | awk '/^pick→ready/ {print $2}')
    r=$(python3 -c "print(f'{$b / $c:.2f}')")
    ratios+=("$r")
    printf '%-40s pair %d  load %-5s  CLI %5.2f s  browser %4.1f s  ratio %s\n' "$(basename "$f")" "$i" "$load" "$c" "$b" "$r"
  done
  printf '%-40s median ratio %s (of %s)\n' "$(basename "$f")" \
    "$(printf '%s\n' "${ratios[@]}" | sort -n | python3 -c 'import sys, statistics; print(f"{statistics.median(float(x) for x in sys.stdin):.2f}")')" \
    "$(IFS=' '; echo "${ratios[*]}")"
done
