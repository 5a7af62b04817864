#!/usr/bin/env bash
# The project's one test command (README: `bash scripts/test.sh`; `.ci/run` calls exactly this).
# Installs missing tools, runs every Rust test, builds `shared` for wasm32 and the frontend with
# Trunk, then runs the browser tests against a live server on the Hetionet graph.
set -euo pipefail
cd "$(dirname "$0")/.."

bash scripts/setup.sh
TOOLS_DIR="${SERENQA_TOOLS:-$HOME/.cache/serenqa-tools}"
export PATH="$TOOLS_DIR/node_modules/.bin:$HOME/.cargo/bin:$PATH"

step() { printf '\n==> %s\n' "$*"; }

# Incremental caches double the size of a one-off build's target dir and buy nothing in CI.
export CARGO_INCREMENTAL=0
df -h . | sed 's/^/[disk] /'

# Real Redis for the scale-out tests: a single instance and a three-shard cluster on loopback,
# stopped when this script exits (whatever way it exits).
server=""; server2=""; annot_dir=""; runs_dir=""
cleanup() {
  [ -n "$server" ] && kill "$server" 2>/dev/null || true
  [ -n "$server2" ] && kill "$server2" 2>/dev/null || true
  [ -n "$annot_dir" ] && rm -rf "$annot_dir"
  [ -n "$runs_dir" ] && rm -rf "$runs_dir"
  bash scripts/redis.sh stop || true
}
trap cleanup EXIT
step "Redis: single instance and three-shard cluster"
redis_env=$(bash scripts/redis.sh start)
eval "$redis_env"
echo "SERENQA_REDIS_URL=$SERENQA_REDIS_URL"
echo "SERENQA_REDIS_CLUSTER=$SERENQA_REDIS_CLUSTER"

step "format: cargo fmt --all --check (rustfmt.toml)"
cargo fmt --all --check

step "lint: cargo clippy --workspace --all-targets -- -D warnings ([workspace.lints], clippy.toml)"
cargo clippy --workspace --all-targets -- -D warnings

step "structure: no file-level import cycle in the graph, model, predict, cypher, pipeline, server and frontend crates"
python3 scripts/import_cycles.py frontend
python3 scripts/import_cycles.py backend/graph
python3 scripts/import_cycles.py backend/predict
python3 scripts/import_cycles.py backend/cypher
python3 scripts/import_cycles.py backend/pipeline
python3 scripts/import_cycles.py backend/model
python3 scripts/import_cycles.py backend/server
# …and no grab-bag file in the pipeline crate (split by concept past 800 lines).
find backend/pipeline -name '*.rs' -print0 | xargs -0 wc -l |
  awk '$2 != "total" && $1 > 800 { print "too long (> 800 lines): " $2; bad = 1 } END { exit bad }'
# One seeded RNG (shared::rng), one home of source-database URLs (shared::links), and no
# Hetionet relation name in the generic Cypher engine (its perf cases live in benchmark::perf).
if grep -rniE "struct splitmix|fn splitmix" --include=*.rs shared backend frontend | grep -v '^shared/src/rng.rs:'; then
  echo "a second SplitMix64 outside shared::rng"; exit 1
fi
if grep -rnE '"[^"]*(drugbank\.com|uniprot\.org|genecards\.org|disease-ontology\.org|reactome\.org|smpdb\.ca|hmdb\.ca)' \
    --include=*.rs shared/src backend/*/src frontend/src | grep -v '^shared/src/links.rs:'; then
  echo "a source-database URL outside shared::links"; exit 1
fi
if grep -rnE '"[^"]*_(CtD|CpD|DaG|CbG|GpPW)' --include=*.rs backend/cypher/src; then
  echo "a Hetionet relation name in the Cypher engine"; exit 1
fi

step "cargo test (all host crates)"
cargo test --no-fail-fast

step "shared crate builds for wasm32-unknown-unknown"
cargo build -p serenqa-shared --target wasm32-unknown-unknown

step "frontend: trunk build --release"
trunk build --release
wasm=$(ls dist/*.wasm | head -1)
printf 'wasm bundle: %s bytes, %s bytes gzipped\n' "$(stat -c %s "$wasm")" "$(gzip -9 -c "$wasm" | wc -c)"

step "browser tests (headless Chromium)"
cargo build -p serenqa
# Graph + serendipity model in the cached snapshot (imports Hetionet on a fresh machine).
./target/debug/serenqa --quiet precompute
# Plausibility predictions for every compound–disease pair (Discover proposes by them).
./target/debug/serenqa --quiet predict
# Two small offline evaluation runs for the leaderboard (different beam settings).
runs_dir=$(mktemp -d)
./target/debug/serenqa --quiet eval --limit 45 --runs "$runs_dir" >/dev/null
./target/debug/serenqa --quiet eval --limit 45 --beam 10 --nodes 5 --runs "$runs_dir" >/dev/null
main_db="$runs_dir/e2e-main.sqlite"
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
log=target/e2e-server.log
# The browser suite is one client making many requests in a row: it gets its own per-client
# budget rather than racing the default limiter (which `backend/server/tests/admission.rs`
# tests), so no test depends on how fast the machine runs the ones before it.
budget=(--rate 1000 --burst 100000)
./target/debug/serenqa --quiet serve --addr "127.0.0.1:$port" --dist dist --runs "$runs_dir" --db "$main_db" "${budget[@]}" >"$log" 2>&1 &
server=$!
for _ in $(seq 1 120); do
  python3 -c "import urllib.request,sys; urllib.request.urlopen(sys.argv[1], timeout=2)" "http://127.0.0.1:$port/api/graph" >/dev/null 2>&1 && break
  kill -0 $server 2>/dev/null || { echo "server died:"; cat "$log"; exit 1; }
  sleep 1
done
node tests/e2e/run.mjs "http://127.0.0.1:$port"

step "annotation browser tests (throwaway SQLite, imported SerenQA questionnaire)"
annot_dir=$(mktemp -d)
port2=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
./target/debug/serenqa annotate --db "$annot_dir/e2e.sqlite" import-serenqa
admin_link=$(./target/debug/serenqa admin --db "$annot_dir/e2e.sqlite" create --email admin@example.org --base-url "http://127.0.0.1:$port2")
log2=target/e2e-annotate-server.log
# An empty runs directory: this server computes the offline baseline run itself (a fresh install's leaderboard).
./target/debug/serenqa --quiet serve --addr "127.0.0.1:$port2" --dist dist --db "$annot_dir/e2e.sqlite" --runs "$annot_dir/runs" "${budget[@]}" >"$log2" 2>&1 &
server2=$!
for _ in $(seq 1 120); do
  python3 -c "import urllib.request,sys; urllib.request.urlopen(sys.argv[1], timeout=2)" "http://127.0.0.1:$port2/api/graph" >/dev/null 2>&1 && break
  kill -0 $server2 2>/dev/null || { echo "server died:"; cat "$log2"; exit 1; }
  sleep 1
done
node tests/e2e/annotate.mjs "http://127.0.0.1:$port2" "$admin_link"
