#!/usr/bin/env bash
# Idempotent set-up of everything the build and the tests need, from the registries only (the
# Rust package registry, npm's, Debian's). Nothing here downloads a prebuilt binary or a browser.
# Versions are pinned; the comments below say why each pin exists.
set -euo pipefail
cd "$(dirname "$0")/.."

TRUNK_VERSION=0.21.14
WASM_BINDGEN_VERSION=0.2.130

log() { printf '[setup] %s\n' "$*" >&2; }

# 1. Rust target for the browser build.
if ! rustup target list --installed | grep -qx wasm32-unknown-unknown; then
  log "adding rust target wasm32-unknown-unknown"
  rustup target add wasm32-unknown-unknown
fi

# 2. Debian's Chromium (+ driver) for the browser tests.
if ! command -v chromium >/dev/null 2>&1; then
  log "installing Debian chromium (apt)"
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium chromium-driver >/dev/null
fi

# 3. Trunk, built from the Rust package registry (a faster, less optimised build: it is a dev
#    tool), without its default features: TLS (rustls, ring) serves only its downloads of tools
#    and its update check, neither of which may happen here.
if [ "$(trunk --version 2>/dev/null || true)" != "trunk $TRUNK_VERSION" ]; then
  log "installing trunk $TRUNK_VERSION from the Rust package registry (4 to 9 minutes)"
  CARGO_PROFILE_RELEASE_LTO=false CARGO_PROFILE_RELEASE_CODEGEN_UNITS=16 \
    CARGO_PROFILE_RELEASE_OPT_LEVEL=1 \
    cargo install trunk --version "$TRUNK_VERSION" --locked --no-default-features
fi

# 4. wasm-bindgen-cli; must equal the wasm-bindgen crate pinned in Cargo.toml / Cargo.lock.
#    Not --locked: one locked dependency version is missing from the registry mirror.
if [ "$(wasm-bindgen --version 2>/dev/null || true)" != "wasm-bindgen $WASM_BINDGEN_VERSION" ]; then
  log "installing wasm-bindgen-cli $WASM_BINDGEN_VERSION from the Rust package registry (2 to 4 minutes)"
  CARGO_PROFILE_RELEASE_LTO=false CARGO_PROFILE_RELEASE_CODEGEN_UNITS=16 \
    CARGO_PROFILE_RELEASE_OPT_LEVEL=1 \
    cargo install wasm-bindgen-cli --version "$WASM_BINDGEN_VERSION"
fi

# 5. npm packages (playwright-core for e2e, binaryen for wasm-opt), pinned by package-lock.json.
if [ -f package.json ]; then
  if [ ! -d node_modules ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
    log "npm ci"
    npm ci --no-audit --no-fund --loglevel=error
  fi
fi
log "tools ready"
