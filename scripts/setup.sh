#!/usr/bin/env bash
# Installs, idempotently, every tool the build and the tests need on a fresh machine of the
# project's kind (Debian 12 + rustup stable). Each step is skipped when its tool is present.
# Only package registries are used (crates.io, npm, Debian): Trunk never downloads its tools.
set -euo pipefail

TRUNK_VERSION=0.21.14
WASM_BINDGEN_VERSION=0.2.130   # must equal Cargo.lock's wasm-bindgen and Trunk.toml
BINARYEN_VERSION=132           # wasm-opt; Debian's binaryen 108 breaks wasm-bindgen output
TOOLS_DIR="${SERENQA_TOOLS:-$HOME/.cache/serenqa-tools}"

log() { printf '[setup] %s\n' "$*"; }

if ! rustup target list --installed | grep -qx wasm32-unknown-unknown; then
  log "adding rust target wasm32-unknown-unknown"
  rustup target add wasm32-unknown-unknown
fi
for comp in rustfmt clippy; do
  if ! rustup component list --installed | grep -q "^$comp"; then
    log "adding rust component $comp"
    rustup component add "$comp"
  fi
done

need_apt=()
command -v chromium >/dev/null 2>&1 || need_apt+=(chromium)
command -v redis-server >/dev/null 2>&1 || need_apt+=(redis-server)
command -v redis-cli >/dev/null 2>&1 || need_apt+=(redis-tools)
command -v npm >/dev/null 2>&1 || need_apt+=(npm)
if [ ${#need_apt[@]} -gt 0 ]; then
  log "apt-get install ${need_apt[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq "${need_apt[@]}" >/dev/null
fi

if ! trunk --version 2>/dev/null | grep -q "$TRUNK_VERSION"; then
  log "cargo install trunk $TRUNK_VERSION (~5 min)"
  cargo install trunk --version "$TRUNK_VERSION" --locked
fi

if ! wasm-bindgen --version 2>/dev/null | grep -q "$WASM_BINDGEN_VERSION"; then
  log "cargo install wasm-bindgen-cli $WASM_BINDGEN_VERSION (~1.5 min)"
  # Without --locked: one of its locked dependencies is missing from the registry mirror.
  cargo install wasm-bindgen-cli --version "$WASM_BINDGEN_VERSION" --force
fi

if [ ! -x "$TOOLS_DIR/node_modules/.bin/wasm-opt" ]; then
  log "npm install binaryen@$BINARYEN_VERSION into $TOOLS_DIR"
  mkdir -p "$TOOLS_DIR"
  npm install --silent --prefix "$TOOLS_DIR" "binaryen@$BINARYEN_VERSION" >/dev/null
fi

if [ ! -d "$TOOLS_DIR/node_modules/playwright-core" ]; then
  log "npm install playwright-core into $TOOLS_DIR"
  npm install --silent --prefix "$TOOLS_DIR" playwright-core >/dev/null
fi

log "tools ready (wasm-opt and playwright-core in $TOOLS_DIR)"
