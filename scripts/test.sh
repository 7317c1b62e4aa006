#!/usr/bin/env bash
# Runs every test: formatting, lints (native and wasm32), the Rust test suites, the release
# browser build, the Python wheel (built, installed into a fresh venv, tested without Rust), and
# the end-to-end tests in headless Chromium. Installs what is missing first.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
export PATH="$PWD/node_modules/.bin:$PATH"
export TRUNK_SKIP_VERSION_CHECK=true

step() { printf '\n== %s\n' "$*"; }

step "cargo fmt --check"
cargo fmt --all -- --check
step "cargo clippy (native, all targets)"
cargo clippy --all-targets --locked -- -D warnings
step "cargo clippy (the Python extension module, python/; needs a Python interpreter)"
cargo clippy -p prefix-exec-python --all-targets --locked -- -D warnings
step "cargo clippy (wasm32: app, worker, library)"
cargo clippy --lib --bins --target wasm32-unknown-unknown --locked -- -D warnings
# The release CLI, with the synthetic grid's generator (they share its compile): the Rust
# tests that run the CLI as a process (tests/support/cli_bin.rs) and the browser tests compare
# with it; unoptimised, the CLI took minutes over every released run.
step "cargo build --release (the CLI and the synthetic grid's generator)"
cargo build --release --locked --quiet --bin prefix-exec --example synth_grid
export PREFIX_EXEC_CLI="$PWD/target/release/prefix-exec"
step "cargo test"
cargo test --locked
step "trunk build --release"
trunk build --release --locked
step "app size (bench/size.sh)"
bash bench/size.sh --check
step "Python wheel: build, install into a fresh venv, pytest without Rust (scripts/python.sh)"
bash scripts/python.sh
step "end-to-end tests (headless Chromium)"
node --test --test-concurrency=1 e2e/
