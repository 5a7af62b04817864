#!/usr/bin/env bash
# A single Redis and a three-shard Redis Cluster on loopback, for the scale-out tests and
# benchmarks. `bash scripts/redis.sh start` starts them (stopping leftovers of an earlier run
# first) and prints the environment the tests read; `stop` stops them and removes their files.
#   SERENQA_REDIS_URL=redis://127.0.0.1:6479
#   SERENQA_REDIS_CLUSTER=redis+cluster://127.0.0.1:7479,127.0.0.1:7480,127.0.0.1:7481
# Ports: SERENQA_REDIS_PORT (single), SERENQA_REDIS_CLUSTER_PORT (first of three).
set -euo pipefail

dir="${SERENQA_REDIS_DIR:-${TMPDIR:-/tmp}/serenqa-redis}"
single=${SERENQA_REDIS_PORT:-6479}
first=${SERENQA_REDIS_CLUSTER_PORT:-7479}
cluster=("$first" "$((first + 1))" "$((first + 2))")

stop_one() {
  local port=$1 pidfile="$dir/$1/redis.pid"
  if [ -f "$pidfile" ]; then
    local pid
    pid=$(cat "$pidfile" 2>/dev/null || true)
    if [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null; then
      redis-cli -p "$port" shutdown nosave >/dev/null 2>&1 || kill "$pid" 2>/dev/null || true
      for _ in $(seq 1 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    fi
  fi
  rm -rf "${dir:?}/$port"
}

start_one() {
  local port=$1; shift
  mkdir -p "$dir/$port"
  if redis-cli -p "$port" ping >/dev/null 2>&1; then
    echo "[redis] port $port is taken by a server this script did not start" >&2
    exit 1
  fi
  redis-server --bind 127.0.0.1 --port "$port" --dir "$dir/$port" --daemonize yes \
    --pidfile "$dir/$port/redis.pid" --logfile "$dir/$port/redis.log" \
    --save '' --appendonly no "$@"
  for _ in $(seq 1 100); do
    redis-cli -p "$port" ping >/dev/null 2>&1 && return 0
    sleep 0.1
  done
  echo "[redis] redis-server on port $port did not start:" >&2
  cat "$dir/$port/redis.log" >&2 || true
  exit 1
}

case "${1:-start}" in
  start)
    command -v redis-server >/dev/null || { echo "[redis] redis-server not found (bash scripts/setup.sh installs it)" >&2; exit 1; }
    for p in "$single" "${cluster[@]}"; do stop_one "$p"; done
    start_one "$single"
    for p in "${cluster[@]}"; do
      start_one "$p" --cluster-enabled yes --cluster-config-file nodes.conf --cluster-node-timeout 5000
    done
    timeout 60 redis-cli --cluster create "${cluster[@]/#/127.0.0.1:}" --cluster-replicas 0 --cluster-yes >"$dir/cluster-create.log" 2>&1 \
      || { echo "[redis] cluster create failed:" >&2; cat "$dir/cluster-create.log" >&2; exit 1; }
    for _ in $(seq 1 100); do
      redis-cli -p "$first" cluster info 2>/dev/null | grep -q 'cluster_state:ok' && break
      sleep 0.1
    done
    redis-cli -p "$first" cluster info | grep -q 'cluster_state:ok' || { echo "[redis] cluster did not become ready" >&2; exit 1; }
    echo "export SERENQA_REDIS_URL=redis://127.0.0.1:$single"
    echo "export SERENQA_REDIS_CLUSTER=redis+cluster://127.0.0.1:${cluster[0]},127.0.0.1:${cluster[1]},127.0.0.1:${cluster[2]}"
    ;;
  stop)
    for p in "$single" "${cluster[@]}"; do stop_one "$p"; done
    ;;
  *)
    echo "usage: bash scripts/redis.sh start|stop" >&2
    exit 2
    ;;
esac
