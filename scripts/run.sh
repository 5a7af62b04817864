#!/usr/bin/env bash
# The project's run command (README): install what is missing, build the server and the web
# app, and serve the app on the Hetionet graph at http://127.0.0.1:8080 (SERENQA_ADDR to change).
set -euo pipefail
cd "$(dirname "$0")/.."

bash scripts/setup.sh
TOOLS_DIR="${SERENQA_TOOLS:-$HOME/.cache/serenqa-tools}"
export PATH="$TOOLS_DIR/node_modules/.bin:$HOME/.cargo/bin:$PATH"

trunk build --release
cargo build --release -p serenqa
# Import Hetionet and precompute the serendipity model once (cached in ~/.cache/serenqa).
./target/release/serenqa precompute
exec ./target/release/serenqa serve --dist dist "$@"
