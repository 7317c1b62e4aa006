#!/usr/bin/env bash
# Builds the Python wheel (python/: maturin, the Rust core + the built web app) and tests it the
# way a user gets it: installed into a fresh virtual environment, run with the Rust toolchain
# off PATH (python/tests/, pytest).
#
# Needs the release app in dist/ (trunk build --release; scripts/test.sh builds it first).
# Installs, idempotently and from the package registries only (pinned):
#   target/python-tools/  maturin (a registry wheel; it drives cargo)
#   target/python-venv/   made anew each run: the built wheel, pytest, pandas
# Environment: PYTHON (default python3), PREFIX_EXEC_SKIP_BUILD=1 (reuse target/wheels).
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD

MATURIN_VERSION=1.16.0
PYTEST_VERSION=9.2.0
PANDAS_VERSION=3.1.1
PYTHON=${PYTHON:-python3}
TOOLS=$ROOT/target/python-tools
VENV=$ROOT/target/python-venv
WHEELS=$ROOT/target/wheels

log() { printf '[python] %s\n' "$*" >&2; }

# 0. Debian's python3 makes virtual environments only with python3-venv (ensurepip).
if ! "$PYTHON" -c 'import venv, ensurepip' >/dev/null 2>&1; then
  log "installing Debian's python3-venv (apt)"
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq python3-venv >/dev/null
fi

# 1. maturin, in a virtual environment of its own (not the system's Python).
if [ "$("$TOOLS/bin/maturin" --version 2>/dev/null || true)" != "maturin $MATURIN_VERSION" ]; then
  log "installing maturin $MATURIN_VERSION"
  rm -rf "$TOOLS"
  "$PYTHON" -m venv "$TOOLS"
  "$TOOLS/bin/pip" install -q --disable-pip-version-check "maturin==$MATURIN_VERSION"
fi

# 2. The web app goes into the package (git-ignored copy; pyproject.toml includes it).
if [ ! -f dist/index.html ]; then
  echo "dist/ is missing: build the app first (trunk build --release, see scripts/test.sh)" >&2
  exit 1
fi
rm -rf python/prefix_exec/app
mkdir -p python/prefix_exec/app
# The bundled example stays in: `prefix-exec view` offers "Load example" like the hosted app.
cp -r dist/. python/prefix_exec/app/

# 3. The wheel (the `wheel` profile: thin LTO), at low priority (CARGO_BUILD_JOBS is honoured).
if [ "${PREFIX_EXEC_SKIP_BUILD:-}" != 1 ] || ! ls "$WHEELS"/prefix_exec-*.whl >/dev/null 2>&1; then
  log "building the wheel (maturin, profile wheel)"
  rm -f "$WHEELS"/prefix_exec-*.whl
  start=$(date +%s)
  nice -n 15 "$TOOLS/bin/maturin" build -m python/Cargo.toml --out "$WHEELS" --locked --quiet \
    --interpreter "$PYTHON"
  log "wheel built in $(($(date +%s) - start)) s"
fi
WHEEL=$(ls "$WHEELS"/prefix_exec-*.whl | head -1)
log "$(basename "$WHEEL"): $(stat -c %s "$WHEEL") bytes"

# 4. A fresh virtual environment holding the wheel and the test tools.
rm -rf "$VENV"
"$PYTHON" -m venv "$VENV"
"$VENV/bin/pip" install -q --disable-pip-version-check "$WHEEL" "pytest==$PYTEST_VERSION" \
  "pandas==$PANDAS_VERSION"

# 5. The tests, with no Rust toolchain reachable: PATH holds the venv, node and the system.
NO_RUST_PATH=$VENV/bin
for dir in $(dirname "$(command -v node)") /usr/local/bin /usr/bin /bin; do
  case "$dir" in *cargo*|*rustup*) ;; *) NO_RUST_PATH=$NO_RUST_PATH:$dir ;; esac
done
# The native binary (built by cargo test) for the byte-identity checks, when it is there.
export PREFIX_EXEC_CLI=${PREFIX_EXEC_CLI:-$ROOT/target/debug/prefix-exec}
cd python/tests  # not the source tree's root: `import prefix_exec` must find the installed one
env PATH="$NO_RUST_PATH" CARGO=/nonexistent RUSTC=/nonexistent PREFIX_EXEC_ROOT="$ROOT" \
  "$VENV/bin/python" -m pytest -q -p no:cacheprovider .
