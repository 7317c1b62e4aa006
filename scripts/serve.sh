#!/usr/bin/env bash
# Builds the browser app (release) and serves it on http://127.0.0.1:${PORT:-8080}/ with the
# bundled example one click away ("Load example"). Installs what is missing first.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
export PATH="$PWD/node_modules/.bin:$PATH"
TRUNK_SKIP_VERSION_CHECK=true trunk build --release --locked
port="${PORT:-8080}"
echo "prefix-exec: open http://127.0.0.1:$port/ and click \"Load example\" (Ctrl-C stops the server)"
exec python3 -m http.server "$port" --bind 127.0.0.1 --directory dist
