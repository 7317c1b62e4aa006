#!/usr/bin/env bash
# Runs every fuzz target for N seconds each (default 60) and prints executions and crashes per
# target. Usage: bash scripts/fuzz.sh [SECONDS] [TARGET...]
#
# Needs the nightly toolchain and cargo-fuzz (installed here if missing). Corpora grow in
# fuzz/corpus/<target> (not committed); seeds are rebuilt from the test fixtures on every run;
# crashes land in fuzz/artifacts/<target>. A crash becomes a fixed bug plus a regression test.
set -euo pipefail
cd "$(dirname "$0")/.."
SECONDS_EACH="${1:-60}"
shift || true
TARGETS=("$@")
[ ${#TARGETS[@]} -gt 0 ] || TARGETS=(canonical tau_bench tau2 bfcl toolsandbox schema_check report inspect transcript archive_tar archive_gzip archive_zip)

rustup toolchain list | grep -q '^nightly' || rustup toolchain install nightly --profile minimal
command -v cargo-fuzz >/dev/null || cargo install cargo-fuzz --version 0.13.2 --locked

SEP=$'\n\x00--file--\x00\n'
FX=tests/fixtures/import
seeds() { # target → fuzz/seeds/<target>
  local t="$1" d="fuzz/seeds/$1"
  rm -rf "$d" && mkdir -p "$d"
  case "$t" in
    canonical)
      cp "$FX"/canonical/*.jsonl tests/golden/small.jsonl "$d"/
      head -n 40 static/examples/synthetic-grid.jsonl > "$d/grid-head.jsonl"
      cp tests/hostile/*.jsonl "$d"/ 2>/dev/null || true ;;
    tau_bench) cp "$FX"/tau-bench/*.json "$d"/ ;;
    archive_tar|archive_gzip|archive_zip) # file contents to wrap, and the real thing to mangle
      cp "$FX"/canonical/*.jsonl tests/golden/small.jsonl "$d"/
      tar -cf "$d/repo.tar" -C tests/fixtures/repo agent_hard_benchmark-face722e/tau2-bench
      gzip -c tests/golden/small.jsonl > "$d/small.jsonl.gz"
      cp "$FX"/inspect/*.eval "$d"/ ;;
    transcript)
      cp "$FX"/transcript/* "$d"/
      { cat "$FX"/transcript/openai-chat.json; printf '%s' "$SEP"; cat "$FX"/transcript/positional.jsonl; } > "$d/file-and-jsonl" ;;
    tau2)
      cp "$FX"/tau2/*.json "$d"/
      { cat "$FX"/tau2/dir-run/results.json; printf '%s' "$SEP"
        cat "$FX"/tau2/dir-run/simulations/sim-a.json; printf '%s' "$SEP"
        cat "$FX"/tau2/dir-run/simulations/sim-b.json; } > "$d/dir-run" ;;
    bfcl)
      { cat "$FX"/bfcl/result/*/multi_turn/*.json; printf '%s' "$SEP"
        cat "$FX"/bfcl/score/*/multi_turn/*.json; } > "$d/base"
      { cat "$FX"/bfcl/no-log/result/*/multi_turn/*.json; printf '%s' "$SEP"
        cat "$FX"/bfcl/no-log/score/*/multi_turn/*.json; } > "$d/no-log" ;;
    toolsandbox) # the committed run: summary, then the files check_toolsandbox names
      local run="$FX/toolsandbox/agent_acme/tiny-1_user_openai/gpt-4o_01_02_2025_03_04_05"
      { cat "$run/result_summary.json"; printf '%s' "$SEP"
        cat "$run/trajectories/wifi_on_parallel/execution_context.json"; printf '%s' "$SEP"
        cat "$run/trajectories/timestamp_scrambled/conversation.json"; printf '%s' "$SEP"
        cat "$run/trajectories/max_turns_cut/execution_context.json"; printf '%s' "$SEP"
        cat "$run/trajectories/only_conversation/conversation.json"; } > "$d/run" ;;
    schema_check)
      printf '%s' '[{"type":"function","function":{"name":"cd","parameters":{"type":"object","properties":{"folder":{"type":"string","pattern":"^[a-z]+$"}},"required":["folder"],"additionalProperties":false}}}]' > "$d/openai"
      printf '%s' "$SEP" 'cd' "$SEP" '{"folder":"a"}' >> "$d/openai"
      printf '%s' '{"get_user":{"name":"get_user","params":{"type":"object","properties":{"id":{"type":"integer","minimum":0},"tags":{"type":"array","items":{"$ref":"#/properties/id"}}}}}}' > "$d/tau2"
      printf '%s' "$SEP" 'get_user' "$SEP" '{"id":-1,"tags":[1,"x"]}' >> "$d/tau2" ;;
    inspect)
      cp "$FX"/inspect/*.json "$FX"/inspect/*.eval "$d"/
      { python3 -c 'import json,sys; h=json.load(open(sys.argv[1])); [h.pop(k) for k in ("samples","reductions")]; print(json.dumps(h))' "$FX"/inspect/log.json
        printf '%s' "$SEP"
        python3 -c 'import json,sys; print(json.dumps(json.load(open(sys.argv[1]))["samples"][0]))' "$FX"/inspect/log.json; } > "$d/header-and-sample" ;;
    report)
      for s in canonical tau_bench tau2 bfcl toolsandbox inspect transcript; do seeds "$s"; cp fuzz/seeds/"$s"/* "$d"/ 2>/dev/null || true; done
      { cat tests/golden/small.jsonl; printf '%s' "$SEP"; cat "$FX"/tau-bench/*.json; printf '%s' "$SEP"
        cat "$FX"/canonical/tools.jsonl; } > "$d/mixed" ;;
  esac
}

cd fuzz
cargo +nightly fuzz build -O -a -s none
cd ..
printf '%-14s %12s %10s %8s %8s\n' target executions exec/s corpus crashes
for t in "${TARGETS[@]}"; do
  seeds "$t"
  mkdir -p "fuzz/corpus/$t" "fuzz/artifacts/$t"
  log="fuzz/artifacts/$t.log"
  before=$(ls "fuzz/artifacts/$t" | wc -l)
  # -rss_limit_mb bounds memory (a leak or blow-up is reported as a crash); -timeout flags any
  # single input that takes over 10 s (a hang in the browser's worker).
  (cd fuzz && cargo +nightly fuzz run -O -a -s none "$t" "corpus/$t" "seeds/$t" -- \
      -dict=json.dict -max_total_time="$SECONDS_EACH" -rss_limit_mb=4096 -timeout=10 \
      -max_len=65536 -print_final_stats=1) >"$log" 2>&1 || true
  after=$(ls "fuzz/artifacts/$t" | wc -l)
  runs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$' || echo "?")
  speed=$(grep -o 'stat::average_exec_per_sec: *[0-9]*' "$log" | grep -o '[0-9]*$' || echo "?")
  corpus=$(ls "fuzz/corpus/$t" | wc -l)
  printf '%-14s %12s %10s %8s %8s\n' "$t" "$runs" "$speed" "$corpus" "$((after - before))"
done
