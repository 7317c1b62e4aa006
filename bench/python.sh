#!/usr/bin/env bash
# `score` from Python (the wheel, scripts/python.sh) against the native CLI (release build, fat
# LTO) on the paper-sized synthetic grid (6,768 rollouts, 10,000 resamples, seed 0): the best of
# REPS runs of each, alternating, single-threaded and on every core. The native time is the whole
# CLI process (read, score, table, JSON); Python's is timed around score() + to_json() in the
# process, and as a whole `python -c` process. Prints the load average.
# Prints numbers only; nothing is asserted. Needs target/python-venv (bash scripts/python.sh).
# Run from anywhere: bash bench/python.sh [REPS]
set -euo pipefail
cd "$(dirname "$0")/.."
reps=${1:-5}
out=bench/out; mkdir -p "$out"
py=target/python-venv/bin/python
[ -x "$py" ] || { echo "run bash scripts/python.sh first (it installs the wheel into target/python-venv)" >&2; exit 1; }
nice -n 15 cargo build --release --locked --quiet --bin prefix-exec --example synth_grid
[ -f "$out/grid1.jsonl" ] || target/release/examples/synth_grid -o "$out/grid1.jsonl" 2>/dev/null
grid=$out/grid1.jsonl
echo "# paper-sized grid ($(wc -l < "$grid") rollouts), B = 10000, seed 0, best of $reps; $(nproc) cores"
echo "# load average (1, 5, 15 min) before: $(cut -d' ' -f1-3 /proc/loadavg)"
for threads in 1 "$(nproc)"; do
  native=() python=() process=()
  for _ in $(seq "$reps"); do
    s=$(date +%s.%N)
    target/release/prefix-exec score "$grid" --quiet --threads "$threads" --json /dev/null >/dev/null
    native+=("$(echo "$(date +%s.%N) - $s" | bc)")
    # Timed inside Python around score() and to_json() (the interpreter's start-up left out,
    # as the CLI's process start is tiny); the import is done before.
    python+=("$("$py" -c "
import time, prefix_exec
s = time.perf_counter()
prefix_exec.score('$grid', threads=$threads).to_json()
print(time.perf_counter() - s)")")
    # The whole `python -c` process too: interpreter start-up and import included.
    s=$(date +%s.%N)
    "$py" -c "import prefix_exec; prefix_exec.score('$grid', threads=$threads).to_json()"
    process+=("$(echo "$(date +%s.%N) - $s" | bc)")
  done
  best() { printf '%s\n' "$@" | sort -g | head -1; }
  n=$(best "${native[@]}") p=$(best "${python[@]}") w=$(best "${process[@]}")
  printf 'threads %s: native CLI process %.3f s; Python score() %.3f s (ratio %.3f); whole Python process %.3f s (ratio %.3f)\n' \
    "$threads" "$n" "$p" "$(echo "$p / $n" | bc -l)" "$w" "$(echo "$w / $n" | bc -l)"
done
echo "# load average (1, 5, 15 min) after: $(cut -d' ' -f1-3 /proc/loadavg)"
